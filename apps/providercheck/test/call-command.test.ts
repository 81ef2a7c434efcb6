// `providercheck call` against fakemerchant (the real provider on demo data), over both transports.
import assert from 'node:assert/strict'
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { currencyExponent, formatAmount, main } from '../src/index.js'
import { freshTarget, SECRET, type Target } from './support/kit-harness.js'

const ENV = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET }
let mcp: Target
let rest: Target
before(async () => {
  mcp = await freshTarget()
  rest = await freshTarget(undefined, 'json', {}, 'rest')
})
after(async () => {
  await mcp.close()
  await rest.close()
})

async function call(argv: string[], env: Record<string, string> = ENV) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(['call', ...argv], env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

const target = (transport: 'mcp' | 'rest') => (transport === 'mcp' ? mcp : rest)

for (const transport of ['mcp', 'rest'] as const) {
  test(`${transport}: a read prints status, outcome, the body pretty-printed and amounts in major units`, async () => {
    const r = await call([
      '-transport',
      transport,
      '-allow-private',
      '-base-url',
      target(transport).url,
      'sr_get_transaction',
      '{"transaction_ref":"ch_1001"}',
    ])
    assert.equal(r.code, 0, r.err)
    assert.match(r.out, new RegExp(`^call sr_get_transaction over ${transport}: `))
    assert.match(r.out, /^status: 200, outcome: result \(1 attempt/m)
    assert.match(r.out, /^ {2}"transaction_ref": "ch_1001",$/m)
    assert.match(r.out, /^amounts:\n {2}amount: 4999 minor \(49\.99 USD\)$/m)
  })

  test(`${transport}: a refusal prints its status and code and exits 1; a real refund prints its amount`, async () => {
    const base = ['-transport', transport, '-allow-private', '-base-url', target(transport).url, 'sr_refund']
    const key = `t:ticket:c:refund:${transport}`
    const request = (minor: number) =>
      JSON.stringify({
        idempotency_key: key,
        request: {
          transaction_ref: 'ch_1001',
          amount: { amount_minor: minor, currency: 'USD' },
          reason: 'service_issue',
          dry_run: false,
        },
      })
    const refused = await call([...base, request(999_999)])
    assert.equal(refused.code, 1)
    assert.match(refused.out, /^status: 422, outcome: error amount_exceeds_refundable/m)
    const done = await call([...base, request(2000).replace(key, `${key}:2`)])
    assert.equal(done.code, 0, done.out)
    assert.match(done.out, /^ {2}amount: 2000 minor \(20\.00 USD\)$/m)
  })

  test(`${transport}: a wrong secret is answered 401 and exits 1, naming no secret`, async () => {
    const r = await call(
      ['-transport', transport, '-allow-private', '-base-url', target(transport).url, 'sr_describe', '{}'],
      { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: 'srmps_wrong_secret_0123456789abcdef' },
    )
    assert.equal(r.code, 1)
    assert.match(r.out, /^status: 401/m)
    assert.doesNotMatch(r.out + r.err, /srmps_/)
  })
}

test('call usage errors name the problem and exit 2, never echoing JSON-ARGS', async () => {
  const base = ['-transport', 'rest', '-allow-private', '-base-url', 'http://127.0.0.1:9']
  const cases: [string[], RegExp][] = [
    [[...base, 'sr_nope', '{}'], /TOOL must be a profile tool/],
    [[...base, 'sr_describe', '{"email":"a@b.c","email":"x"}'], /JSON-ARGS must be one strict JSON object/],
    [[...base, 'sr_describe', '[1]'], /JSON-ARGS must be one strict JSON object/],
    [[...base, 'sr_describe'], /call: missing JSON-ARGS/],
    [['-base-url', 'http://127.0.0.1:9', 'sr_describe', '{}'], /call: missing --transport/],
    [[...base, '-frob', 'sr_describe', '{}'], /call: unknown flag --frob/],
    [[...base, '-era', 'legacy', 'sr_describe', '{}'], /--era applies to --transport mcp only/],
  ]
  for (const [argv, message] of cases) {
    const r = await call(argv)
    assert.equal(r.code, 2, argv.join(' '))
    assert.match(r.err, message)
    assert.doesNotMatch(r.err, /a@b\.c/)
  }
})

test('amounts in major units follow the ISO 4217 exponent table; an unknown currency is not guessed', () => {
  assert.equal(formatAmount(2000, 'USD'), '2000 minor (20.00 USD)')
  assert.equal(formatAmount(5, 'EUR'), '5 minor (0.05 EUR)')
  assert.equal(formatAmount(2000, 'JPY'), '2000 minor (2000 JPY)')
  assert.equal(formatAmount(1234, 'KWD'), '1234 minor (1.234 KWD)')
  assert.equal(formatAmount(-150, 'USD'), '-150 minor (-1.50 USD)')
  assert.equal(formatAmount(2000, 'XYZ'), '2000 minor (? XYZ)')
  assert.equal(currencyExponent('XYZ'), undefined)
})

test('without -allow-private a loopback base URL is refused before any request, with the hint', async () => {
  const r = await call(['-transport', 'rest', '-base-url', rest.url, 'sr_describe', '{}'])
  assert.equal(r.code, 1)
  assert.match(r.out, /ERR_PLATFORM_BASE_URL: .*\(a local server needs -allow-private\)/)
})

// Issue 31 §1: `call` is the platform client's call, so a Retry-After on 429/409 in_progress/503 is waited out and
// the same request sent again. A proxy before the real provider answers the first request 429 with Retry-After and
// forwards the rest untouched (Host included, so the signature still verifies); it counts what it receives.
test('rest: a 429 with Retry-After is waited out and the call answered on the retry', async () => {
  const upstream = new URL(rest.url)
  let received = 0
  const proxy = createServer((req, res) => {
    received += 1
    if (received === 1) {
      req.resume()
      res
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' })
        .end('{"error":{"code":"rate_limited","message":"slow down","retryable":true}}')
      return
    }
    const out = request(
      { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    req.pipe(out)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = proxy.address() as AddressInfo
    const r = await call([
      '-transport',
      'rest',
      '-allow-private',
      '-base-url',
      `http://127.0.0.1:${port}`,
      'sr_get_transaction',
      '{"transaction_ref":"ch_1001"}',
    ])
    assert.equal(r.code, 0, r.err)
    assert.match(r.out, /^status: 200, outcome: result \(2 attempts/m)
    assert.equal(received, 2)
  } finally {
    proxy.closeAllConnections()
    await new Promise<void>((resolve) => proxy.close(() => resolve()))
  }
})
