import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { PlatformClient } from '../src/index.js'
import {
  modernHandler,
  type Recorded,
  type Responder,
  startResponder,
  TRANSACTION_JSON,
  toolResultText,
} from './support/responder.js'

const SECRET = 'srmps_wire_test_secret_0123456789'
const CONTEXT = { correlationId: 'c-1', channel: 'ticket' }
const servers: Responder[] = []
after(async () => {
  for (const s of servers) await s.close()
})

async function callWith(
  tool: (req: Recorded) => { status: number; body: string } | { sse: string[] },
  name = 'sr_get_transaction',
  args: Record<string, unknown> = { transaction_ref: 'ch_1001' },
) {
  const s = await startResponder(modernHandler(tool))
  servers.push(s)
  const c = new PlatformClient({
    baseUrl: s.url,
    secret: SECRET,
    allowPrivate: true,
    eraCache: new Map(),
    retryDelayMs: 1,
  })
  return { server: s, result: c.callTool(name, args, CONTEXT) }
}

test('an amount written 4999.0 in structuredContent fails with ERR_PLATFORM_NOT_INTEGER', async () => {
  const { result } = await callWith((req) => ({
    status: 200,
    body: toolResultText(req.message?.id, TRANSACTION_JSON.replace('"amount_minor":4999', '"amount_minor":4999.0')),
  }))
  await assert.rejects(result, { code: 'ERR_PLATFORM_NOT_INTEGER' })
})

test('a duplicate key in the answer fails with ERR_PLATFORM_DUPLICATE_KEY', async () => {
  const { result } = await callWith((req) => ({
    status: 200,
    body: toolResultText(
      req.message?.id,
      TRANSACTION_JSON.replace('"state":"succeeded"', '"state":"succeeded","state":"failed"'),
    ),
  }))
  await assert.rejects(result, { code: 'ERR_PLATFORM_DUPLICATE_KEY' })
})

test('structuredContent that breaks the contract fails with ERR_PLATFORM_INVALID_RESULT', async () => {
  const { result } = await callWith((req) => ({
    status: 200,
    body: toolResultText(req.message?.id, TRANSACTION_JSON.replace('"state":"succeeded",', '')),
  }))
  await assert.rejects(result, { code: 'ERR_PLATFORM_INVALID_RESULT' })
})

test('a result whose resultType is not complete fails the call', async () => {
  const { result } = await callWith((req) => ({
    status: 200,
    body: toolResultText(req.message?.id, TRANSACTION_JSON, ',"resultType":"input_required"'),
  }))
  await assert.rejects(result, { code: 'ERR_PLATFORM_RESULT_TYPE' })
})

test('an isError envelope maps its code to the seed status table', async () => {
  // The seed's whole table ("Sonuçlar"), as literals: a refusal code and an x_ code are 422.
  const cases: [string, number][] = [
    ['invalid_request', 400],
    ['credentials_rejected', 401],
    ['not_found', 404],
    ['idempotency_conflict', 409],
    ['in_progress', 409],
    ['amount_exceeds_refundable', 422],
    ['already_canceled', 422],
    ['x_fraud_hold', 422],
    ['rate_limited', 429],
    // 5xx codes are retried first; a read without a key then answers the last envelope.
    ['internal_error', 500],
    ['unavailable', 503],
  ]
  for (const [code, status] of cases) {
    const { result } = await callWith((req) => ({
      status: 200,
      body: toolResultText(
        req.message?.id,
        `{"error":{"code":"${code}","message":"m","retryable":false}}`,
        ',"isError":true',
      ),
    }))
    const out = await result
    assert.equal(out.kind, 'error')
    assert.equal(out.kind === 'error' && out.status, status, code)
    assert.equal(out.kind === 'error' && out.code, code)
  }
})

test('an error envelope outside the contract fails with ERR_PLATFORM_INVALID_RESULT', async () => {
  const { result } = await callWith((req) => ({
    status: 200,
    body: toolResultText(
      req.message?.id,
      '{"error":{"code":"nope","message":"m","retryable":false}}',
      ',"isError":true',
    ),
  }))
  await assert.rejects(result, { code: 'ERR_PLATFORM_INVALID_RESULT' })
})

test('a JSON-RPC error counts as 5xx: retried up to maxAttempts, then thrown', async () => {
  const { server, result } = await callWith((req) => ({
    status: 200,
    body: JSON.stringify({ jsonrpc: '2.0', id: req.message?.id, error: { code: -32603, message: 'boom' } }),
  }))
  await assert.rejects(result, { code: 'ERR_PLATFORM_JSON_RPC_ERROR' })
  assert.equal(server.requests.filter((r) => r.message?.method === 'tools/call').length, 3)
})

/** The seed's real refund arguments (2000 USD of ch_1001) under `key`. */
const refundOf2000 = (key: string) => ({
  idempotency_key: key,
  request: {
    transaction_ref: 'ch_1001',
    amount: { amount_minor: 2000, currency: 'USD' },
    reason: 'service_issue',
    dry_run: false,
  },
})

test('a stream that ends without an answer is retried with the same key, then verified with sr_get_operation', async () => {
  const operation =
    '{"idempotency_key":"k-1","status":"succeeded","operation":"refund","target_ref":"ch_1001","updated_at":"2026-10-15T09:12:44Z",' +
    '"result":{"idempotency_key":"k-1","status":"succeeded","transaction_ref":"ch_1001","amount":{"amount_minor":2000,"currency":"USD"},' +
    '"refund_ref":"re_77","processed_at":"2026-10-15T09:12:44Z"}}'
  const args = refundOf2000('k-1')
  const { server, result } = await callWith(
    (req) =>
      (req.message?.params as { name?: string } | undefined)?.name === 'sr_get_operation'
        ? { status: 200, body: toolResultText(req.message?.id, operation) }
        : { sse: ['{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}'] },
    'sr_refund',
    args,
  )
  const out = await result
  assert.equal(out.kind, 'verified')
  assert.equal(out.kind === 'verified' && out.lastFailure, 'ERR_PLATFORM_NO_ANSWER')
  assert.equal(out.kind === 'verified' && (out.operation as { status: string }).status, 'succeeded')
  const calls = server.requests
    .filter((r) => r.message?.method === 'tools/call')
    .map((r) => r.message?.params as { name: string; arguments: unknown })
  assert.deepEqual(
    calls.map((c) => c.name),
    ['sr_refund', 'sr_refund', 'sr_refund', 'sr_get_operation'],
  )
  for (const c of calls.slice(0, 3)) assert.deepEqual(c.arguments, args)
  // The same key every attempt, but each attempt is a new request: a new request_id.
  const requestIds = server.requests
    .filter((r) => r.message?.method === 'tools/call')
    .map((r) => (r.message?.params?._meta as Record<string, unknown> | undefined)?.['dev.supportroute/request_id'])
  assert.equal(new Set(requestIds).size, 4)
  // Each attempt opens its own session: server/discover before every tools/call.
  assert.deepEqual(
    server.requests.map((r) => r.message?.method),
    Array.from({ length: 4 }, () => ['server/discover', 'tools/call']).flat(),
  )
})

test('an internal_error envelope is retried; a refusal is not', async () => {
  let n = 0
  const { server, result } = await callWith((req) => {
    n += 1
    return {
      status: 200,
      body:
        n === 1
          ? toolResultText(
              req.message?.id,
              '{"error":{"code":"internal_error","message":"m","retryable":true}}',
              ',"isError":true',
            )
          : toolResultText(
              req.message?.id,
              '{"error":{"code":"not_refundable","message":"m","retryable":false}}',
              ',"isError":true',
            ),
    }
  })
  const out = await result
  assert.equal(out.kind === 'error' && out.code, 'not_refundable')
  assert.equal(out.kind === 'error' && out.attempts, 2)
  assert.equal(server.requests.filter((r) => r.message?.method === 'tools/call').length, 2)
})

test('an HTTP 503 on the call is retried and surfaces as ERR_PLATFORM_HTTP_STATUS', async () => {
  const { server, result } = await callWith(() => ({ status: 503, body: '' }))
  await assert.rejects(result, { code: 'ERR_PLATFORM_HTTP_STATUS', status: 503 })
  assert.equal(server.requests.filter((r) => r.message?.method === 'tools/call').length, 3)
})

test('a keyed call answered unavailable on every attempt is verified with sr_get_operation', async () => {
  const operation = '{"idempotency_key":"k-2","status":"unknown"}'
  const args = refundOf2000('k-2')
  const { server, result } = await callWith(
    (req) =>
      (req.message?.params as { name?: string } | undefined)?.name === 'sr_get_operation'
        ? { status: 200, body: toolResultText(req.message?.id, operation) }
        : {
            status: 200,
            body: toolResultText(
              req.message?.id,
              '{"error":{"code":"unavailable","message":"m","retryable":true}}',
              ',"isError":true',
            ),
          },
    'sr_refund',
    args,
  )
  const out = await result
  assert.equal(out.kind, 'verified')
  assert.equal(out.kind === 'verified' && out.lastFailure, 'unavailable')
  assert.equal(out.kind === 'verified' && (out.operation as { status: string }).status, 'unknown')
  assert.equal(server.requests.filter((r) => r.message?.method === 'tools/call').length, 4)
})
