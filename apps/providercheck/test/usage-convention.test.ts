// The command-line convention every Tollgate CLI follows, pinned for providercheck: -h/--help and --version exit 0;
// a usage error is exit 2 with exactly two stderr lines (the one problem naming the flag, then `see providercheck
// --help`) and nothing run; output paths that cannot be written are refused before any request.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { main, USAGE } from '../src/index.js'
import { kitArgv } from './support/kit-harness.js'

const ENV = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: 'srmps_usage_test_secret_0123456789' }
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version

async function cli(argv: string[], env: Record<string, string> = ENV) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out, err }
}

/** Asserts the usage-error convention and returns the problem line. */
function usageProblem(r: { code: number; out: string[]; err: string[] }, label: string): string {
  assert.equal(r.code, 2, label)
  assert.deepEqual(r.out, [], `${label}: nothing is printed on stdout`)
  assert.equal(r.err.length, 2, `${label}: ${r.err.join(' | ')}`)
  assert.equal(r.err[1], 'see providercheck --help', label)
  assert.match(r.err[0] as string, /^providercheck: /, label)
  return r.err[0] as string
}

test('-h and --help print the usage; --version and -version print the package.json version; all exit 0', async () => {
  for (const flag of ['-h', '--help', '-help']) {
    const r = await cli([flag], {})
    assert.equal(r.code, 0, flag)
    assert.deepEqual(r.out, [USAGE], flag)
    assert.deepEqual(r.err, [], flag)
  }
  for (const flag of ['--version', '-version']) {
    const r = await cli([flag], {})
    assert.equal(r.code, 0, flag)
    assert.deepEqual(r.out, [`providercheck ${PACKAGE_VERSION}`], flag)
  }
  assert.match(USAGE, /providercheck -h \| --version/)
})

test('an unknown flag or a bad value names the flag and the problem, exit 2, nothing else printed', async () => {
  const seed = kitArgv('http://127.0.0.1:9/mcp')
  const cases: [string[], RegExp][] = [
    [[...seed, '-frobnicate'], /^providercheck: unknown flag --frobnicate$/],
    [[...seed, '--frobnicate=1'], /^providercheck: unknown flag --frobnicate$/],
    [[...seed, '-era', 'modern'], /^providercheck: --era must be auto, 2026-07-28 or legacy$/],
    [seed.map((a) => (a === 'mcp' ? 'grpc' : a)), /^providercheck: --transport must be mcp or rest$/],
    [seed.map((a) => (a.startsWith('http') ? 'not a url' : a)), /^providercheck: --base-url must be an absolute URL/],
    [[...seed, '-json'], /^providercheck: --json needs a value$/],
    [[...seed, '-html='], /^providercheck: --html needs a value$/],
    [[...seed, '-sandbox=yes'], /^providercheck: --sandbox takes no value$/],
    [[...seed, '-json', 'same.out', '-html', 'same.out'], /^providercheck: --json and --html name the same file$/],
    [['verify'], /^providercheck: verify takes one argument: the report file$/],
    [['report', 'r.json'], /^providercheck: report needs -o FILE/],
    [['report', '-o', 'x.html'], /^providercheck: report needs the report file/],
    [['report', 'r.json', '-x', 'x.html'], /^providercheck: report: unknown flag --x \(it takes -o FILE\)$/],
  ]
  for (const [argv, message] of cases) {
    assert.match(usageProblem(await cli(argv), argv.join(' ')), message, argv.join(' '))
  }
})

test('a -json or -html path that cannot be written is a usage error before any request', async () => {
  let requests = 0
  const server = createServer((_req, res) => {
    requests += 1
    res.writeHead(500).end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-paths-'))
  try {
    mkdirSync(join(dir, 'a-folder'))
    writeFileSync(join(dir, 'a-file'), '')
    const cases: [string, string, RegExp][] = [
      ['-json', join(dir, 'missing', 'report.json'), /^providercheck: -json .*: the folder .*missing does not exist$/],
      ['-html', join(dir, 'missing', 'report.html'), /^providercheck: -html .*: the folder .*missing does not exist$/],
      ['-json', join(dir, 'a-folder'), /^providercheck: -json .*a-folder is a folder, not a file$/],
      ['-html', join(dir, 'a-file', 'report.html'), /^providercheck: -html .*a-file is not a folder$/],
    ]
    for (const [flag, path, message] of cases) {
      const problem = usageProblem(await cli(kitArgv(url, flag, path)), `${flag} ${path}`)
      assert.match(problem, message)
    }
    assert.equal(requests, 0, 'no request was sent')
    // The control: a writable path reaches the provider (which answers 500, so the run fails, exit 1).
    const control = await cli(kitArgv(url, '-json', join(dir, 'ok.json')))
    assert.equal(control.code, 1)
    assert.ok(requests > 0)
  } finally {
    server.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
