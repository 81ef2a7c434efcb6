import assert from 'node:assert/strict'
import { test } from 'node:test'
import { main, parseCommandLine } from '../src/index.js'

const SEED_LINE = [
  '-sandbox',
  '-transport',
  'mcp',
  '-allow-private',
  '-base-url',
  'http://localhost:8080/mcp',
  '-tenant',
  '0199a3c1-0a0b-7c0d-8e0f-101112131415',
  '-customer',
  'cus_1001',
  '-transaction',
  'ch_1001',
  '-subscription',
  'sub_1001',
]
const ENV = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: 'srmps_cli_test_secret_0123456789' }

async function cli(argv: string[], env: Record<string, string> = ENV) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

test("the seed's command line parses verbatim", () => {
  assert.deepEqual(parseCommandLine(SEED_LINE), {
    kind: 'run',
    sandbox: true,
    transport: 'mcp',
    allowPrivate: true,
    baseUrl: 'http://localhost:8080/mcp',
    tenant: '0199a3c1-0a0b-7c0d-8e0f-101112131415',
    customer: 'cus_1001',
    transaction: 'ch_1001',
    subscription: 'sub_1001',
    json: undefined,
    era: 'auto',
  })
})

test('double-dash flags and -flag=value parse the same', () => {
  const double = SEED_LINE.map((a) => (a.startsWith('-') ? `-${a}` : a))
  assert.deepEqual(parseCommandLine(double), parseCommandLine(SEED_LINE))
  assert.deepEqual(parseCommandLine(['-sandbox', '-transport=mcp', ...SEED_LINE.slice(3)]), parseCommandLine(SEED_LINE))
})

test('missing flags and a missing secret are named in the usage message, exit 2', async () => {
  const r = await cli(['-transport', 'mcp', '-base-url', 'http://localhost:8080/mcp'], {})
  assert.equal(r.code, 2)
  assert.match(
    r.err,
    /missing: -sandbox, -tenant, -customer, -transaction, -subscription, PROVIDERCHECK_SANDBOX_SIGNING_SECRET \(environment\)/,
  )
  const noSecret = await cli(SEED_LINE, {})
  assert.equal(noSecret.code, 2)
  assert.match(noSecret.err, /missing: PROVIDERCHECK_SANDBOX_SIGNING_SECRET/)
})

test('-transport rest is a clear not-supported-yet usage error', async () => {
  const r = await cli(SEED_LINE.map((a) => (a === 'mcp' ? 'rest' : a)))
  assert.equal(r.code, 2)
  assert.match(r.err, /-transport rest is not supported yet/)
})

test('a production secret is refused: the kit runs against sandboxes only', async () => {
  const r = await cli(SEED_LINE, { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: 'srmp_production_secret_0123456789' })
  assert.equal(r.code, 2)
  assert.match(r.err, /must hold a sandbox signing secret/)
  assert.doesNotMatch(r.err, /srmp_production_secret/)
})

test('-h prints the usage and exits 0; an unknown flag exits 2', async () => {
  const help = await cli(['-h'])
  assert.equal(help.code, 0)
  assert.match(help.out, /^usage: providercheck -sandbox -transport mcp/)
  const unknown = await cli([...SEED_LINE, '-frobnicate'])
  assert.equal(unknown.code, 2)
  assert.match(unknown.err, /unknown flag -frobnicate/)
})

test('verify needs exactly one report file', async () => {
  assert.equal((await cli(['verify'])).code, 2)
  assert.equal((await cli(['verify', '/nonexistent/report.json'])).code, 2)
})

test('without -allow-private a loopback base URL fails discovery before any request, and the rest is skipped', async () => {
  const r = await cli(
    SEED_LINE.filter((a) => a !== '-allow-private').map((a) =>
      a.startsWith('http://') ? 'http://127.0.0.1:9/mcp' : a,
    ),
  )
  assert.equal(r.code, 1)
  const lines = r.out.split('\n')
  assert.match(
    lines[1] as string,
    /^discovery +fail {2}base_url_rejected +base URL rejected: the scheme must be https \(a local server needs -allow-private\)/,
  )
  assert.equal(lines.filter((l) => / skip {2}dependency_failed /.test(l)).length, 19)
})
