// Each CLI installs the way users install Node tools: `npm pack` in the app, `npm install -g ./tarball` into an empty
// prefix, then the commands run from an unrelated folder. One install of the five tarballs, then real runs: preflight
// checks the seed's example; the installed providercheck passes all its checks against the installed fakemerchant;
// the installed prove proves the installed quenchz.
// No network: npm resolves through a loopback registry serving the locked versions from the local npm cache (see
// support/loopback-registry.ts), and better-sqlite3 gets the native binary this checkout already built as its
// prebuild, so the install compiles nothing.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { packAll } from '../scripts/pack-all.mjs'
import { type LoopbackRegistry, startLoopbackRegistry } from './support/loopback-registry.ts'
import { isolatedNpmEnv, NPM, run, userNpmCache } from './support/npm-install.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const APPS = ['apps/preflight', 'apps/provider', 'apps/providercheck', 'apps/quenchz', 'apps/prove']
const BINS = ['preflight', 'fakemerchant', 'providercheck', 'quenchz', 'prove']
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version

/** Starts a long-running installed command and resolves once a stdout line matches `ready`. */
function startServer(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    // Bounded: a server that never says it is ready fails the test instead of hanging it.
    const timer = setTimeout(() => {
      child.kill('SIGTERM')
      reject(new Error(`${command} was not ready within 60 s:\n${output}`))
    }, 60_000)
    const onData = (d: string) => {
      output += d
      const match = output.match(ready)
      if (match !== null) {
        clearTimeout(timer)
        resolve({ child, match, output: () => output })
      }
    }
    child.stdout.setEncoding('utf8').on('data', onData)
    child.stderr.setEncoding('utf8').on('data', onData)
    child.once('error', reject)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${command} exited (${code}) before it was ready:\n${output}`))
    })
  })
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

describe('installed from npm pack tarballs into an empty prefix', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-install-'))
  const elsewhere = join(work, 'elsewhere')
  const prefix = join(work, 'prefix')
  const bin = (name: string) => join(prefix, 'bin', name)
  let registry: LoopbackRegistry | undefined
  let env: NodeJS.ProcessEnv

  before(async () => {
    mkdirSync(elsewhere)
    // The apps and the published libraries they depend on, packed as for a release (scripts/pack-all.mjs).
    const packed = packAll(join(work, 'tarballs'), { clis: true })
    const apps = packed.filter((t) => APPS.includes(t.dir as string))
    assert.deepEqual(apps.map((t) => t.dir).sort(), [...APPS].sort())
    // prepack's shrinkwrap is removed again by postpack: the working tree stays as it was.
    for (const app of APPS) assert.equal(existsSync(join(ROOT, app, 'npm-shrinkwrap.json')), false, app)

    const npmCache = userNpmCache()
    // The libraries are served as the npm registry would serve them once published.
    const libraries = packed.filter((t) => !APPS.includes(t.dir as string)).map((t) => t.file)
    registry = await startLoopbackRegistry(join(ROOT, 'package-lock.json'), npmCache, libraries)
    env = isolatedNpmEnv(work, registry.url)
    const install = await run(
      NPM,
      ['install', '-g', '--prefix', prefix, '--allow-scripts=better-sqlite3', ...apps.map((t) => t.file)],
      { cwd: elsewhere, env },
    )
    const missing =
      registry.missing.length > 0 ? `\nnot in the npm cache (${npmCache}): ${registry.missing.join(', ')}` : ''
    assert.equal(install.code, 0, `npm install -g failed:${missing}\n${install.stderr.slice(-4000)}`)
  })

  after(async () => {
    await registry?.close()
    rmSync(work, { recursive: true, force: true })
  })

  test('every command is on the prefix PATH', () => {
    for (const name of BINS) assert.ok(existsSync(bin(name)), name)
  })

  test('the installed packages are the five commands; only published @tollgate libraries come with them', () => {
    const installed = join(prefix, 'lib', 'node_modules', '@tollgate')
    assert.deepEqual(readdirSync(installed).sort(), ['preflight', 'prove', 'provider', 'providercheck', 'quenchz'])
    for (const app of readdirSync(installed)) {
      const nested = join(installed, app, 'node_modules', '@tollgate')
      // The CLI-only apps bundle everything of ours; the library apps bring the published libraries they import.
      const manifestInRepo = JSON.parse(readFileSync(join(ROOT, 'apps', app, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>
      }
      const expected = ['prove', 'quenchz'].includes(app)
        ? []
        : Object.keys(manifestInRepo.dependencies)
            .filter((d) => d.startsWith('@tollgate/'))
            .map((d) => d.slice('@tollgate/'.length))
            .sort()
      assert.deepEqual(existsSync(nested) ? readdirSync(nested).sort() : [], expected, app)
      const manifest = JSON.parse(readFileSync(join(installed, app, 'package.json'), 'utf8')) as { version: string }
      assert.equal(manifest.version, VERSION, app)
    }
  })

  test('preflight checks the seed example from another folder', async () => {
    copyFileSync(join(ROOT, 'apps/preflight/examples/01-current_control.json'), join(elsewhere, 'receipt.json'))
    const r = await run(bin('preflight'), ['receipt.json'], { cwd: elsewhere })
    assert.equal(
      r.stdout,
      `{"diagnostic":"educational_expected_match","exit_code":0,"outcome":"consistent_sample","version":"${VERSION}"}\n`,
    )
    assert.equal(r.code, 0)
  })

  test('fakemerchant prints its version, and the installed providercheck passes against it', async () => {
    const version = await run(bin('fakemerchant'), ['--version'], { cwd: elsewhere })
    assert.equal(version.stdout, `fakemerchant ${VERSION}\n`)
    const secret = `srmps_${'0123456789abcdef'.repeat(2)}`
    const server = await startServer(
      bin('fakemerchant'),
      ['--port', '0'],
      { cwd: elsewhere, env: { ...process.env, SIGNING_SECRET: secret } },
      /serving (http:\/\/\S+\/mcp)/,
    )
    try {
      const check = await run(
        bin('providercheck'),
        [
          '-sandbox',
          '-transport',
          'mcp',
          '-allow-private',
          '-base-url',
          server.match[1] as string,
          '-tenant',
          '0199a3c1-0a0b-7c0d-8e0f-101112131415',
          '-customer',
          'cus_1001',
          '-transaction',
          'ch_1001',
          '-subscription',
          'sub_1001',
        ],
        { cwd: elsewhere, env: { ...process.env, PROVIDERCHECK_SANDBOX_SIGNING_SECRET: secret } },
      )
      assert.equal(check.code, 0, `${check.stdout}\n${check.stderr}`)
      assert.doesNotMatch(check.stdout, /\bFAIL\b/)
    } finally {
      await stop(server.child)
    }
  })

  test('the installed prove proves the installed quenchz', async () => {
    const recordings = join(work, 'recordings')
    mkdirSync(recordings)
    // An empty recordings index: a source that opens anywhere, so this needs no shared data.
    writeFileSync(join(recordings, 'index.json'), '[]')
    const tokens = join(work, 'quenchz-tokens.json')
    const port = await freePort()
    const server = await startServer(
      bin('quenchz'),
      // The frozen budget clock is what the proofs ask for (the served default refills on the wall clock).
      [
        '--port',
        String(port),
        '--tokens-file',
        tokens,
        '--budget-clock',
        'frozen',
        '--source',
        'recordings',
        '--recordings',
        recordings,
      ],
      { cwd: elsewhere, env: process.env },
      /listening on http:\/\//,
    )
    try {
      const proof = await run(bin('prove'), [tokens], { cwd: elsewhere })
      assert.equal(proof.code, 0, `${proof.stdout}\n${proof.stderr}`)
      assert.match(proof.stdout, /(\d+) of \1 checks passed\./)
    } finally {
      await stop(server.child)
    }
  })
})
