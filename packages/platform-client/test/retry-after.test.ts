// Issue 31 §1: the client honours Retry-After on 409 in_progress, 429 and 503 as the platform would — within its
// deadline, under a cap, never for a refusal that is not retryable. Real HTTP servers answer the refusal a given
// number of times and count the requests they receive; nothing here is timed.
import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { PlatformClient, type PlatformClientOptions } from '../src/index.js'
import {
  DISCOVER_RESULT,
  type Recorded,
  type Reply,
  type Responder,
  rpcResult,
  startResponder,
  TRANSACTION_JSON,
  toolResultText,
} from './support/responder.js'

const SECRET = 'srmps_retry_after_test_0123456789'
const CONTEXT = { correlationId: '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6', channel: 'ticket' }
const KEY = '0199a3c1-0a0b-7c0d-8e0f-101112131415:ticket:0199e2c4:refund:0199e2c4-7777'
const REQUEST = {
  transaction_ref: 'ch_1001',
  amount: { amount_minor: 2000, currency: 'USD' },
  reason: 'service_issue',
  dry_run: false,
}
const REFUND_JSON = `{"idempotency_key":"${KEY}","status":"succeeded","transaction_ref":"ch_1001","amount":{"amount_minor":2000,"currency":"USD"},"refund_ref":"re_77","processed_at":"2026-10-15T09:12:44Z"}`
const envelope = (code: string, retryable: boolean) =>
  `{"error":{"code":"${code}","message":"m","retryable":${retryable}}}`

const servers: Responder[] = []
after(async () => {
  for (const s of servers) await s.close()
})

/** A REST server that answers `refusal` to the first `times` requests, then `then`. */
async function refusing(times: number, refusal: Reply, then: Reply): Promise<Responder> {
  let seen = 0
  const s = await startResponder(() => {
    seen += 1
    return seen <= times ? refusal : then
  })
  servers.push(s)
  return s
}

function restClient(s: Responder, extra: Partial<PlatformClientOptions> = {}): PlatformClient {
  return new PlatformClient({
    baseUrl: s.url.replace(/\/mcp$/, ''),
    secret: SECRET,
    transport: 'rest',
    allowPrivate: true,
    retryDelayMs: 1,
    ...extra,
  })
}

const refund = (c: PlatformClient) => c.callTool('sr_refund', { idempotency_key: KEY, request: REQUEST }, CONTEXT)
const ok = (body: string): Reply => ({ status: 200, body })
const refusal = (status: number, code: string, retryable: boolean, retryAfter?: string): Reply => ({
  status,
  body: envelope(code, retryable),
  ...(retryAfter !== undefined && { headers: { 'retry-after': retryAfter } }),
})

for (const [status, code] of [
  [409, 'in_progress'],
  [429, 'rate_limited'],
  [503, 'unavailable'],
] as const) {
  test(`REST: ${status} ${code} with Retry-After is waited out and retried with the same key until it answers`, async () => {
    // More refusals than maxAttempts: a Retry-After retry is bounded by the deadline, not by the 5xx attempt count.
    const s = await refusing(4, refusal(status, code, true, '0'), ok(REFUND_JSON))
    const out = await refund(restClient(s))
    assert.equal(out.kind, 'result')
    assert.equal(out.attempts, 5)
    assert.equal(s.requests.length, 5)
    assert.ok(s.requests.every((r) => r.headers['idempotency-key'] === KEY && r.path === '/v1/refunds'))
  })
}

test('HTTP 429 and 503 without an envelope (a proxy, a queue) are retried on their Retry-After too', async () => {
  for (const status of [429, 503]) {
    const s = await refusing(
      2,
      { status, headers: { 'retry-after': '0', 'content-type': 'text/plain' }, body: 'busy' },
      ok(TRANSACTION_JSON),
    )
    const out = await restClient(s).callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
    assert.equal(out.kind, 'result', String(status))
    assert.equal(s.requests.length, 3, String(status))
  }
})

test('a Retry-After given as an HTTP-date is honoured', async () => {
  const past = new Date(Date.now() - 60_000).toUTCString()
  const s = await refusing(1, refusal(409, 'in_progress', true, past), ok(REFUND_JSON))
  const out = await refund(restClient(s))
  assert.equal(out.kind, 'result')
  assert.equal(s.requests.length, 2)
})

test('a refusal that is not retryable is never retried, whatever Retry-After it carries', async () => {
  for (const [status, code] of [
    [409, 'idempotency_conflict'],
    [429, 'rate_limited'],
    [422, 'amount_exceeds_refundable'],
  ] as const) {
    const s = await refusing(1, refusal(status, code, false, '0'), ok(REFUND_JSON))
    const out = await refund(restClient(s))
    assert.equal(out.kind === 'error' && out.code, code)
    assert.equal(s.requests.length, 1, code)
  }
  // 409 in_progress and 429 without Retry-After are answered as received (the caller decides), as before.
  for (const [status, code] of [
    [409, 'in_progress'],
    [429, 'rate_limited'],
  ] as const) {
    const s = await refusing(1, refusal(status, code, true), ok(REFUND_JSON))
    const out = await refund(restClient(s))
    assert.equal(out.kind === 'error' && out.code, code)
    assert.equal(s.requests.length, 1, code)
  }
})

test('a Retry-After beyond maxRetryAfterMs is not waited for: the answer comes back at once, saying when', async () => {
  const s = await refusing(1, refusal(429, 'rate_limited', true, '30'), ok(REFUND_JSON))
  const out = await refund(restClient(s, { maxRetryAfterMs: 10_000 }))
  assert.equal(out.kind, 'error')
  assert.equal(out.kind === 'error' && out.status, 429)
  assert.equal(out.kind === 'error' && out.retryAfterMs, 30_000)
  assert.equal(s.requests.length, 1)
})

test('no wait reaches past the call deadline: a Retry-After longer than what is left ends the call', async () => {
  const s = await refusing(5, refusal(409, 'in_progress', true, '2'), ok(REFUND_JSON))
  const out = await refund(restClient(s, { callTimeoutMs: 1000, maxRetryAfterMs: 60_000 }))
  assert.equal(out.kind === 'error' && out.code, 'in_progress')
  assert.equal(out.kind === 'error' && out.retryAfterMs, 2000)
  assert.equal(s.requests.length, 1)
})

test('a 503 whose Retry-After does not fit ends like any 5xx: verified with sr_get_operation', async () => {
  const operation = `{"idempotency_key":"${KEY}","status":"unknown"}`
  const s = await startResponder((req) =>
    req.path.startsWith('/v1/operations/') ? ok(operation) : refusal(503, 'unavailable', true, '3600'),
  )
  servers.push(s)
  const out = await refund(restClient(s))
  assert.equal(out.kind, 'verified')
  assert.equal(out.kind === 'verified' && out.lastFailure, 'unavailable')
  assert.deepEqual(
    s.requests.map((r) => r.method),
    ['POST', 'GET'],
  )
})

test('aborting the signal ends a wait at once', async () => {
  const controller = new AbortController()
  const s = await startResponder(() => {
    // Abort once the refusal is on its way: the client is then waiting out its Retry-After.
    setImmediate(() => controller.abort())
    return refusal(503, 'unavailable', true, '5')
  })
  servers.push(s)
  await assert.rejects(refund(restClient(s, { signal: controller.signal })), { name: 'AbortError' })
  assert.equal(s.requests.length, 1)
})

test('MCP: an in_progress envelope and an HTTP 429 on the handshake are retried on their Retry-After', async () => {
  let calls = 0
  let discovers = 0
  const s = await startResponder((req: Recorded): Reply => {
    const m = req.message
    if (m?.method === 'server/discover') {
      discovers += 1
      if (discovers === 1) return { status: 429, headers: { 'retry-after': '0' }, body: '' }
      return { status: 200, body: rpcResult(m.id, DISCOVER_RESULT) }
    }
    if (m?.method === 'tools/call') {
      calls += 1
      if (calls <= 2)
        return {
          status: 200,
          headers: { 'retry-after': '0' },
          body: toolResultText(m.id, envelope('in_progress', true), ',"isError":true'),
        }
      return { status: 200, body: toolResultText(m.id, REFUND_JSON) }
    }
    return { status: 404, body: '' }
  })
  servers.push(s)
  const c = new PlatformClient({
    baseUrl: s.url,
    secret: SECRET,
    allowPrivate: true,
    retryDelayMs: 1,
    eraCache: new Map(),
  })
  const out = await refund(c)
  assert.equal(out.kind, 'result')
  assert.equal(out.attempts, 4)
  assert.equal(discovers, 4)
  assert.equal(calls, 3)
})

test('the new options are checked at construction, naming the option', () => {
  const base = { baseUrl: 'https://8.8.8.8/mcp', secret: SECRET }
  assert.throws(() => new PlatformClient({ ...base, callTimeoutMs: 0 }), {
    name: 'RangeError',
    message: /callTimeoutMs/,
  })
  assert.throws(() => new PlatformClient({ ...base, maxRetryAfterMs: -1 }), {
    name: 'RangeError',
    message: /maxRetryAfterMs/,
  })
  assert.throws(() => new PlatformClient({ ...base, maxRetryAfterMs: 1.5 }), {
    name: 'TypeError',
    message: /maxRetryAfterMs/,
  })
})

// The server takes the request and never answers: only the call deadline (300 ms) can end the call, timeoutMs being
// the largest a timer takes (~24 days). Without the cut the call would hang: the test's own timeout is a hang guard.
test('a request that never answers is cut at the call deadline, not held for timeoutMs, and not retried past it', {
  timeout: 120_000,
}, async () => {
  const s = await startResponder(() => new Promise<Reply>(() => {}))
  servers.push(s)
  const c = restClient(s, { callTimeoutMs: 300, timeoutMs: 2 ** 31 - 1 })
  await assert.rejects(c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT), {
    code: 'ERR_PLATFORM_TIMEOUT',
  })
  assert.equal(s.requests.length, 1)
})
