import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { main, parseCommandLine, USAGE } from '../src/index.js'

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
    environment: 'sandbox',
    transport: 'mcp',
    allowPrivate: true,
    baseUrl: 'http://localhost:8080/mcp',
    tenant: '0199a3c1-0a0b-7c0d-8e0f-101112131415',
    customer: 'cus_1001',
    transaction: 'ch_1001',
    subscription: 'sub_1001',
    json: undefined,
    html: undefined,
    era: 'auto',
    edgeHeaders: {},
  })
})

test('-edge-header is repeatable, takes one or two dashes and =, and keeps names as given', () => {
  const parsed = parseCommandLine([
    ...SEED_LINE,
    '-edge-header',
    'X-Edge-Key:  v1 ',
    '--edge-header',
    'CF-Access-Client-Id: id:with:colons',
    '--edge-header=X-Waf: v3',
  ])
  assert.equal(parsed.kind, 'run')
  assert.deepEqual(parsed.kind === 'run' && parsed.edgeHeaders, {
    'X-Edge-Key': 'v1',
    'CF-Access-Client-Id': 'id:with:colons',
    'X-Waf': 'v3',
  })
})

test('a malformed edge header is a usage error (exit 2) that names the header but never its value', async () => {
  const cases: [string[], RegExp][] = [
    [['-edge-header', 'no colon here_VALUE'], /-edge-header must be 'Name: value'/],
    [['-edge-header', ': VALUE'], /-edge-header must be 'Name: value'/],
    [['-edge-header', 'Bad Name: VALUE'], /-edge-header must be 'Name: value'/],
    [['-edge-header', 'X-Edge-Key:'], /-edge-header X-Edge-Key has no value/],
    [
      ['-edge-header', 'X-Edge-Key: bad\u0001VALUE'],
      /-edge-header X-Edge-Key: the value holds characters a header cannot carry/,
    ],
    [
      ['-edge-header', 'X-Edge-Key: VALUE', '-edge-header', 'x-edge-key: VALUE'],
      /-edge-header x-edge-key is given twice/,
    ],
    [['-edge-header', 'X-Edge-Key:', 'VALUE'], /-edge-header X-Edge-Key has no value/],
    [['-edge-header', 'X-Edge-Key: a', 'VALUE'], /unexpected argument after --edge-header \(quote it/],
    [['-edge-header'], /-edge-header needs a value/],
  ]
  for (const [extra, message] of cases) {
    const r = await cli([...SEED_LINE, ...extra])
    assert.equal(r.code, 2, extra.join(' '))
    assert.match(r.err, message)
    assert.doesNotMatch(r.err, /VALUE/, extra.join(' '))
  }
})

test('an edge header the protocol or the signature owns is refused with a usage message, not a stack trace', async () => {
  const cases: [string, RegExp][] = [
    ['Host', /^providercheck: edge header Host is reserved \(-edge-header\)$/m],
    ['Mcp-Session-Id', /^providercheck: edge header Mcp-Session-Id is reserved \(-edge-header\)$/m],
    ['mcp-param-x', /^providercheck: edge header mcp-param-x is reserved/m],
    ['X-SupportRoute-Signature', /^providercheck: edge header X-SupportRoute-Signature is reserved/m],
    ['Content-Type', /^providercheck: edge header Content-Type is reserved/m],
    ['Authorization', /-edge-header Authorization is reserved: the bearer token comes from PROVIDERCHECK_BEARER_TOKEN/],
  ]
  for (const [name, message] of cases) {
    const r = await cli([...SEED_LINE, '-edge-header', `${name}: SECRETVALUE`])
    assert.equal(r.code, 2, name)
    assert.match(r.err, message)
    // The usage-error convention: the one problem, then where the usage is, never the whole usage again.
    assert.match(r.err, /\nsee providercheck --help$/)
    assert.doesNotMatch(r.err, /^usage: providercheck/m)
    assert.doesNotMatch(r.err, /SECRETVALUE|at .*\.ts:\d+/)
    assert.equal(r.out, '', 'nothing runs')
  }
})

test('a bearer token that cannot be a header value is a usage error naming the variable, never the token', async () => {
  const r = await cli(SEED_LINE, { ...ENV, PROVIDERCHECK_BEARER_TOKEN: 'tok_SECRET\nInjected: 1' })
  assert.equal(r.code, 2)
  assert.match(r.err, /^providercheck: the bearer token is not a valid header value \(PROVIDERCHECK_BEARER_TOKEN\)$/m)
  assert.doesNotMatch(r.err, /tok_SECRET|Injected/)
  assert.equal(r.out, '')
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
    /missing: --sandbox, --tenant, --customer, --transaction, --subscription, PROVIDERCHECK_SANDBOX_SIGNING_SECRET \(environment\)/,
  )
  const noSecret = await cli(SEED_LINE, {})
  assert.equal(noSecret.code, 2)
  assert.match(noSecret.err, /missing: PROVIDERCHECK_SANDBOX_SIGNING_SECRET/)
})

test('-transport rest parses like mcp; another transport or -era with rest is a usage error naming the flag', async () => {
  const rest = parseCommandLine(SEED_LINE.map((a) => (a === 'mcp' ? 'rest' : a)))
  assert.equal(rest.kind === 'run' && rest.transport, 'rest')
  const grpc = await cli(SEED_LINE.map((a) => (a === 'mcp' ? 'grpc' : a)))
  assert.equal(grpc.code, 2)
  assert.match(grpc.err, /-transport must be mcp or rest/)
  const era = await cli([...SEED_LINE.map((a) => (a === 'mcp' ? 'rest' : a)), '-era', 'legacy'])
  assert.equal(era.code, 2)
  assert.match(era.err, /--era applies to --transport mcp only/)
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
  assert.match(help.out, /^usage: providercheck --sandbox --transport mcp\|rest/)
  assert.match(help.out, /\[--edge-header 'Name: value' \.\.\.\]/)
  assert.match(help.out, /A bearer token, when the provider requires one, comes from PROVIDERCHECK_BEARER_TOKEN/)
  const unknown = await cli([...SEED_LINE, '-frobnicate'])
  assert.equal(unknown.code, 2)
  assert.match(unknown.err, /unknown flag --frobnicate/)
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

test("the README shows -h's output as it is", () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  assert.ok(readme.includes(`\`\`\`text\n${USAGE}\n\`\`\``), 'README -h block differs from USAGE')
})
