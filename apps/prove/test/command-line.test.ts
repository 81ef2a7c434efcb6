// Both entry points behave like every CLI here: -h/--help and --version exit 0; an unknown flag or a bad value is
// one line naming it plus `see prove --help`, exit 2; a port in use says so and shows --port.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const version = (JSON.parse(readFileSync(join(root, 'apps/prove/package.json'), 'utf8')) as { version: string }).version
const entry = {
  prove: join(root, 'apps/prove/src/cli.ts'),
  runner: join(root, 'apps/prove/src/run-proofs.ts'),
}
const run = (file: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, ['--conditions=@tollgate/source', '--import', 'tsx', file, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, QUENCHZ_PORT: '', ...env },
  })

for (const [name, file] of Object.entries(entry)) {
  describe(`${name}: help, version and usage errors`, () => {
    for (const flag of ['-h', '--help']) {
      test(`${flag} prints the usage on stdout and exits 0`, () => {
        const r = run(file, [flag])
        assert.equal(r.status, 0, r.stderr)
        assert.match(r.stdout, /^usage: /)
        assert.match(r.stdout, /--version/)
        assert.equal(r.stderr, '')
      })
    }
    test('--version prints the package version', () => {
      const r = run(file, ['--version'])
      assert.equal(r.status, 0)
      assert.equal(r.stdout, `prove ${version}\n`)
    })
    test('an unknown flag is named, then where help is; exit 2', () => {
      const r = run(file, ['--bogus'])
      assert.equal(r.status, 2)
      assert.equal(r.stderr, 'prove: unknown flag --bogus\nsee prove --help\n')
      assert.equal(r.stdout, '')
    })
  })
}

describe('the runner’s port', () => {
  test('a bad --port is named; exit 2', () => {
    const r = run(entry.runner, ['--port', 'eighty'])
    assert.equal(r.status, 2)
    assert.equal(r.stderr, 'prove: --port (or QUENCHZ_PORT) must be an integer from 1 to 65535\nsee prove --help\n')
  })

  test('a port in use says so and shows --port, before starting anything; exit 2', async () => {
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
    const port = (blocker.address() as { port: number }).port
    try {
      const r = run(entry.runner, ['--port', String(port)])
      assert.equal(r.status, 2)
      assert.equal(
        r.stderr,
        `prove: port ${port} on 127.0.0.1 is already in use; choose another with --port N, or leave it out for a free one\n`,
      )
      assert.equal(r.stdout, '')
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()))
    }
  })

  test('prove with no manifest names what is missing; exit 2', () => {
    const r = run(entry.prove, [])
    assert.equal(r.status, 2)
    assert.equal(r.stderr, 'prove: the token manifest is missing: prove MANIFEST.json\nsee prove --help\n')
  })
})
