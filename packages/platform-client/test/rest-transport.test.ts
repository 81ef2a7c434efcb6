// The REST transport on the wire (rest-binding.md): one signed request per attempt over the exact bytes sent, the
// key in the header and in the signature's key field, correlation headers new per attempt, strict reading,
// status → outcome, 5xx/dropped connection → retry with the same key then GET /v1/operations/{key}.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { SignatureVerifier } from '@tollgate/signing'
import { PlatformClient, type PlatformClientOptions } from '../src/index.js'
import { type Recorded, type Reply, type Responder, startResponder, TRANSACTION_JSON } from './support/responder.js'

const SECRET = 'srmps_rest_test_secret_0123456789'
const CONTEXT = { correlationId: '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6', channel: 'ticket', externalTicket: 'ZD-42' }
const KEY = '0199a3c1-0a0b-7c0d-8e0f-101112131415:ticket:0199e2c4:refund:0199e2c4-7777'
const REQUEST = {
  transaction_ref: 'ch_1001',
  amount: { amount_minor: 2000, currency: 'USD' },
  reason: 'service_issue',
  dry_run: false,
}
const REFUND_JSON = `{"idempotency_key":"${KEY}","status":"succeeded","transaction_ref":"ch_1001","amount":{"amount_minor":2000,"currency":"USD"},"refund_ref":"re_77","processed_at":"2026-10-15T09:12:44Z"}`
const ENVELOPE = (code: string) => `{"error":{"code":"${code}","message":"m","retryable":false}}`

const servers: Responder[] = []
after(async () => {
  for (const s of servers) await s.close()
})

/** A REST responder; the client's base URL carries the path prefix /billing. */
async function serve(handler: (req: Recorded) => Reply): Promise<{ s: Responder; base: string }> {
  const s = await startResponder(handler)
  servers.push(s)
  return { s, base: s.url.replace(/\/mcp$/, '/billing') }
}

function client(base: string, extra: Partial<PlatformClientOptions> = {}): PlatformClient {
  return new PlatformClient({
    baseUrl: base,
    secret: SECRET,
    transport: 'rest',
    allowPrivate: true,
    retryDelayMs: 1,
    ...extra,
  })
}

/** Verifies a recorded request's signature with the given key field. */
function signedWith(req: Recorded, key: string): boolean {
  const verifier = new SignatureVerifier({ environment: 'sandbox', secrets: [SECRET] })
  return verifier.verify(
    {
      timestamp: req.headers['x-supportroute-timestamp'] as string | undefined,
      signature: req.headers['x-supportroute-signature'] as string | undefined,
    },
    { method: req.method, host: String(req.headers.host), path: req.path, body: req.body, key },
  ).ok
}

const json = (body: string, status = 200): Reply => ({ status, body })

test('a GET is one signed request with an empty body under the prefix, correlation headers and no key', async () => {
  const { s, base } = await serve(() => json(TRANSACTION_JSON))
  const c = client(base)
  const out = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  assert.equal(out.kind, 'result')
  assert.equal(out.kind === 'result' && out.body?.toString('utf8'), TRANSACTION_JSON)
  assert.equal(out.era, null)
  const [first, second] = s.requests as [Recorded, Recorded]
  assert.equal(s.requests.length, 2)
  assert.equal(first.method, 'GET')
  assert.equal(first.path, '/billing/v1/transactions/ch_1001')
  assert.equal(first.body.length, 0)
  assert.equal(first.headers['idempotency-key'], undefined)
  assert.ok(signedWith(first, ''), 'signed with an empty key field')
  assert.equal(first.headers['x-supportroute-correlation-id'], CONTEXT.correlationId)
  assert.equal(first.headers['x-supportroute-channel'], 'ticket')
  assert.equal(first.headers['x-supportroute-external-ticket'], 'ZD-42')
  assert.match(String(first.headers['x-supportroute-request-id']), /^[0-9a-f-]{36}$/)
  assert.notEqual(first.headers['x-supportroute-request-id'], second.headers['x-supportroute-request-id'])
  assert.equal(out.kind === 'result' && out.requestId, first.headers['x-supportroute-request-id'])
})

test('a real refund posts the request object with the key in the header and in the signed key field', async () => {
  const { s, base } = await serve(() => json(REFUND_JSON))
  const out = await client(base).callTool('sr_refund', { idempotency_key: KEY, request: REQUEST }, CONTEXT)
  assert.equal(out.kind, 'result')
  const req = s.requests[0] as Recorded
  assert.equal(req.method, 'POST')
  assert.equal(req.path, '/billing/v1/refunds')
  assert.equal(req.headers['content-type'], 'application/json')
  assert.equal(req.headers['idempotency-key'], KEY)
  assert.deepEqual(JSON.parse(req.body.toString('utf8')), REQUEST)
  assert.ok(signedWith(req, KEY), 'the key field carries the Idempotency-Key value')
  assert.ok(!signedWith(req, ''), 'the MCP form (empty key field) must not verify')
})

test('path parameters are percent-encoded like encodeURIComponent and signed as sent', async () => {
  const { s, base } = await serve(() => json(`{"idempotency_key":"${KEY}","status":"unknown"}`))
  const out = await client(base).callTool('sr_get_operation', { idempotency_key: KEY }, CONTEXT)
  assert.equal(out.kind, 'result')
  const req = s.requests[0] as Recorded
  assert.equal(req.path, `/billing/v1/operations/${encodeURIComponent(KEY)}`)
  assert.ok(req.path.includes('%3A'))
  assert.equal(req.headers['idempotency-key'], undefined, 'the key travels in the path, not the header')
  assert.ok(signedWith(req, ''))
  // A reference of dots cannot turn into a dot segment.
  await client(base)
    .attempt('sr_get_customer', { customer_ref: '..' }, CONTEXT)
    .catch(() => undefined)
  assert.equal((s.requests[1] as Recorded).path, '/billing/v1/customers/%2E%2E')
})

test('statuses map to outcomes: 422/409/404 envelopes as received, 401 as a refused request', async () => {
  const answers: Reply[] = [
    json(ENVELOPE('amount_exceeds_refundable'), 422),
    json(ENVELOPE('idempotency_conflict'), 409),
    json(ENVELOPE('not_found'), 404),
    json(ENVELOPE('amount_exceeds_refundable'), 400),
    json(ENVELOPE('credentials_rejected'), 401),
    { status: 403, headers: { 'content-type': 'text/html' }, body: '<h1>denied</h1>' },
  ]
  const { base } = await serve(() => answers.shift() as Reply)
  const c = client(base)
  const call = () => c.callTool('sr_refund', { idempotency_key: KEY, request: REQUEST }, CONTEXT)
  for (const [status, code] of [
    [422, 'amount_exceeds_refundable'],
    [409, 'idempotency_conflict'],
    [404, 'not_found'],
    [400, 'amount_exceeds_refundable'],
  ] as const) {
    const out = await call()
    assert.equal(out.kind, 'error')
    assert.equal(out.kind === 'error' && out.status, status)
    assert.equal(out.kind === 'error' && out.code, code)
    assert.equal(out.kind === 'error' && out.body?.toString('utf8'), ENVELOPE(code))
  }
  await assert.rejects(call(), { code: 'ERR_PLATFORM_HTTP_STATUS', status: 401, phase: 'rest' })
  await assert.rejects(call(), { code: 'ERR_PLATFORM_HTTP_STATUS', status: 403, phase: 'rest' })
})

test('received bytes are read strictly and validated against the contract', async () => {
  const cases: [Reply, string][] = [
    [json(TRANSACTION_JSON.replace('"amount_minor":4999', '"amount_minor":4999.0')), 'ERR_PLATFORM_NOT_INTEGER'],
    [json(TRANSACTION_JSON.replace('{', '{"state":"succeeded",')), 'ERR_PLATFORM_DUPLICATE_KEY'],
    [json(`\ufeff${TRANSACTION_JSON}`), 'ERR_PLATFORM_MALFORMED_BODY'],
    [json('{"transaction_ref":"ch_1001"}'), 'ERR_PLATFORM_INVALID_RESULT'],
    [{ status: 200, headers: { 'content-type': 'text/html' }, body: TRANSACTION_JSON }, 'ERR_PLATFORM_MALFORMED_BODY'],
    [json('{"error":{"code":"not_found"}}', 404), 'ERR_PLATFORM_INVALID_RESULT'],
    [json(ENVELOPE('not_found').replace('"m"', '"m","message":"n"'), 404), 'ERR_PLATFORM_DUPLICATE_KEY'],
    [{ status: 302, headers: { location: '/elsewhere' } }, 'ERR_PLATFORM_REDIRECT'],
    [{ sse: [TRANSACTION_JSON] }, 'ERR_PLATFORM_MALFORMED_BODY'],
  ]
  for (const [reply, code] of cases) {
    const { s, base } = await serve(() => reply)
    await assert.rejects(
      client(base).callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT),
      { code },
      code,
    )
    assert.equal(s.requests.length, 1, `${code}: not retried, no redirect followed`)
  }
})

test('a 5xx and a dropped connection are retried with the same key and bytes, then verified by GET operations', async () => {
  const operation = `{"idempotency_key":"${KEY}","status":"succeeded","operation":"refund","target_ref":"ch_1001","result":${REFUND_JSON},"updated_at":"2026-10-15T09:12:44Z"}`
  const failures: Reply[] = [json(ENVELOPE('internal_error').replace('false', 'true'), 500), { drop: true }]
  const { s, base } = await serve((req) =>
    req.method === 'GET' ? json(operation) : (failures.shift() ?? json('busy', 503)),
  )
  const out = await client(base).callTool('sr_refund', { idempotency_key: KEY, request: REQUEST }, CONTEXT)
  assert.equal(out.kind, 'verified')
  assert.equal(out.attempts, 3)
  const posts = s.requests.filter((r) => r.method === 'POST')
  assert.equal(posts.length, 3)
  for (const p of posts) {
    assert.equal(p.headers['idempotency-key'], KEY)
    assert.deepEqual(p.body, (posts[0] as Recorded).body)
  }
  assert.equal(new Set(posts.map((p) => p.headers['x-supportroute-request-id'])).size, 3, 'new request id per attempt')
  const verify = s.requests.at(-1) as Recorded
  assert.equal(verify.method, 'GET')
  assert.equal(verify.path, `/billing/v1/operations/${encodeURIComponent(KEY)}`)
})

test('keyFieldFault breaks the key binding three ways, for the signature_idempotency_key check', async () => {
  const { s, base } = await serve(() => json(ENVELOPE('credentials_rejected'), 401))
  const c = client(base)
  for (const fault of ['header_differs', 'signed_empty', 'header_removed'] as const) {
    await assert.rejects(
      c.attempt('sr_refund', { idempotency_key: KEY, request: REQUEST }, CONTEXT, { keyFieldFault: fault }),
      { status: 401 },
    )
  }
  const [a, b, cc] = s.requests as [Recorded, Recorded, Recorded]
  assert.ok(signedWith(a, KEY) && a.headers['idempotency-key'] !== KEY && a.headers['idempotency-key'] !== undefined)
  assert.ok(signedWith(b, '') && b.headers['idempotency-key'] === KEY)
  assert.ok(signedWith(cc, KEY) && cc.headers['idempotency-key'] === undefined)
})

test('MCP-only calls and knobs are refused on the other transport', async () => {
  const c = client('http://127.0.0.1:1/billing')
  await assert.rejects(c.discover(), TypeError)
  await assert.rejects(c.listTools({ maxPages: 5 }), TypeError)
  await assert.rejects(c.attempt('sr_get_customer', {}, CONTEXT), /customer_ref/)
  for (const key of ['', 'a\nb', 'k'.repeat(256), 'ключ']) {
    await assert.rejects(
      c.attempt('sr_refund', { idempotency_key: key, request: REQUEST }, CONTEXT),
      /idempotency_key must be 1 to 255 printable ASCII/,
    )
  }
  const mcp = new PlatformClient({ baseUrl: 'http://127.0.0.1:1/mcp', secret: SECRET, allowPrivate: true })
  await assert.rejects(
    mcp.attempt('sr_refund', { idempotency_key: KEY, request: REQUEST }, CONTEXT, { keyFieldFault: 'signed_empty' }),
    TypeError,
  )
})

test('the base-URL rules are unchanged over REST: https on 443 unless allowPrivate', async () => {
  const c = new PlatformClient({ baseUrl: 'http://127.0.0.1:8080', secret: SECRET, transport: 'rest' })
  await assert.rejects(c.callTool('sr_describe', {}, CONTEXT), { code: 'ERR_PLATFORM_BASE_URL' })
})

test('bearer token and edge headers go on every REST request, and are not signed', async () => {
  const { s, base } = await serve(() => json(TRANSACTION_JSON))
  const c = client(base, { bearerToken: 'tok-123', edgeHeaders: { 'X-Edge-Key': 'edge-1' } })
  await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  await c.callTool('sr_refund', { idempotency_key: KEY, request: REQUEST }, CONTEXT).catch(() => undefined)
  assert.equal(s.requests.length, 2)
  for (const req of s.requests) {
    assert.equal(req.headers.authorization, 'Bearer tok-123')
    assert.equal(req.headers['x-edge-key'], 'edge-1')
  }
  assert.ok(signedWith(s.requests[0] as Recorded, ''))
})

test('what only MCP offers is caller misuse on a REST client (TypeError naming it), and nothing is sent', async () => {
  const { s, base } = await serve(() => json(TRANSACTION_JSON))
  const rest = client(base)
  assert.equal(rest.transport, 'rest')
  await assert.rejects(rest.era(), { name: 'TypeError', message: 'era() is MCP only (transport is rest)' })
  await assert.rejects(rest.discover(), { name: 'TypeError', message: 'discover() is MCP only (transport is rest)' })
  await assert.rejects(rest.listTools({ maxPages: 1 }), {
    name: 'TypeError',
    message: 'listTools() is MCP only (transport is rest)',
  })
  const mcp = new PlatformClient({ baseUrl: s.url, secret: SECRET, allowPrivate: true })
  await assert.rejects(
    mcp.attempt('sr_refund', { idempotency_key: KEY, request: REQUEST }, CONTEXT, { keyFieldFault: 'signed_empty' }),
    { name: 'TypeError', message: 'keyFieldFault applies to the REST transport only' },
  )
  assert.equal(s.requests.length, 0)
})
