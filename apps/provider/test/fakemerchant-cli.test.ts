// The fakemerchant command behaves like every Tollgate CLI: -h/--help, --version, usage errors that name the flag
// (exit 2, `see fakemerchant --help`), a port in use said plainly with --port, a bad --db path said with why, and
// the temporary folder of its default data removed when it exits, by SIGINT or SIGTERM too.
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { runFakemerchant } from './fakemerchant-process.js'
import { SECRET } from './helpers.js'

const APP = fileURLToPath(new URL('..', import.meta.url))
const ROOT_VERSION = (JSON.parse(readFileSync(join(APP, '..', '..', 'package.json'), 'utf8')) as { version: string })
  .version
const scratch = mkdtempSync(join(tmpdir(), 'fakemerchant-cli-test-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

/** Runs `fakemerchant ...args` from sources with its own TMPDIR, so what it leaves behind can be counted. */
function start(args: string[], tmp: string, env: Record<string, string> = { SIGNING_SECRET: SECRET }) {
  return runFakemerchant(args, { ...process.env, ...env, TMPDIR: tmp })
}

function freshTmp(name: string): string {
  const dir = join(scratch, name)
  mkdirSync(dir)
  return dir
}

async function runToEnd(args: string[], name: string) {
  const tmp = freshTmp(name)
  const run = start(args, tmp)
  const code = await run.exited
  return {
    code,
    stdout: run.stdout(),
    stderr: run.stderr(),
    leftovers: readdirSync(tmp).filter((n) => n.startsWith('fakemerchant-')),
  }
}

describe('fakemerchant flags', () => {
  test('-h and --help print the usage on stdout and exit 0', async () => {
    for (const flag of ['-h', '--help']) {
      const r = await runToEnd([flag], `help${flag}`)
      assert.equal(r.code, 0)
      assert.match(r.stdout, /^usage: SIGNING_SECRET=srmps_<random> fakemerchant \[--port 12112\]/)
      assert.match(r.stdout, /--port N/)
      assert.equal(r.stderr, '')
    }
  })

  test('--version prints the repository version', async () => {
    const r = await runToEnd(['--version'], 'version')
    assert.equal(r.stdout, `fakemerchant ${ROOT_VERSION}\n`)
    assert.equal(r.code, 0)
  })

  const usageCases: Array<[string, string[], string]> = [
    ['an unknown flag', ['--nope'], 'unknown flag --nope'],
    ['a flag without its value', ['--port'], '--port needs a value'],
    ['a port that is not a number', ['--port', 'http'], '--port must be a whole number from 0 to 65535'],
    ['a port out of range', ['--port', '70000'], '--port must be a whole number from 0 to 65535'],
    ['a bad --lease-ms', ['--lease-ms', 'soon'], '--lease-ms must be a whole number of at least 0'],
    ['a positional argument', ['serve'], 'unexpected argument: this command takes flags only'],
  ]
  for (const [what, args, problem] of usageCases) {
    test(`${what} is a usage error: exit 2, the problem, and where the help is`, async () => {
      const r = await runToEnd(args, `usage-${what.replaceAll(' ', '-')}`)
      assert.equal(r.stderr, `fakemerchant: ${problem}\nsee fakemerchant --help\n`)
      assert.equal(r.code, 2)
      assert.equal(r.stdout, '')
      assert.deepEqual(r.leftovers, [])
    })
  }
})

describe('fakemerchant --db', () => {
  test('a path in a folder that does not exist says so, exit 2', async () => {
    const r = await runToEnd(['--port', '0', '--db', join(scratch, 'no-such-folder', 'f.sqlite')], 'db-missing')
    assert.equal(
      r.stderr,
      'fakemerchant: --db is in a folder that does not exist; create the folder first\nsee fakemerchant --help\n',
    )
    assert.equal(r.code, 2)
  })

  test('a folder given as --db says to name a file inside it, exit 2', async () => {
    const r = await runToEnd(['--port', '0', '--db', scratch], 'db-folder')
    assert.match(r.stderr, /^fakemerchant: --db is a folder; give a file path inside it/)
    assert.equal(r.code, 2)
  })
})

describe('fakemerchant port in use', () => {
  let blocker: Server
  after(() => new Promise<void>((resolve) => blocker.close(() => resolve())))

  test('says the port is in use, shows --port, exits 1 and leaves no temporary folder', async () => {
    blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    const port = (blocker.address() as { port: number }).port
    const r = await runToEnd(['--port', String(port)], 'port-in-use')
    assert.equal(
      r.stderr,
      `fakemerchant: port ${port} on 127.0.0.1 is already in use; pass another with --port N (--port 0 picks a free one)\n`,
    )
    assert.equal(r.code, 1)
    assert.deepEqual(r.leftovers, [])
  })
})

describe('fakemerchant temporary data folder', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`is removed when fakemerchant stops on ${signal}`, async () => {
      const tmp = freshTmp(`signal-${signal}`)
      const run = start(['--port', '0'], tmp)
      const [, data = ''] = await run.printed(/\(data: (\S+)\)/)
      assert.ok(data.startsWith(tmp), data)
      assert.ok(existsSync(data))
      run.child.kill(signal)
      assert.equal(await run.exited, 0)
      assert.deepEqual(
        readdirSync(tmp).filter((n) => n.startsWith('fakemerchant-')),
        [],
      )
    })
  }
})
