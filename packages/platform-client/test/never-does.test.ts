import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { PlatformClient } from '../src/index.js'
import { modernHandler, type Responder, startResponder, TRANSACTION_JSON, toolResultText } from './support/responder.js'

const SECRET = 'srmps_wire_test_secret_0123456789'
const CONTEXT = { correlationId: 'c-1', channel: 'ticket' }
const servers: Responder[] = []
after(async () => {
  for (const s of servers) await s.close()
})

test('a server request on the SSE stream (sampling, ping) is never answered', async () => {
  const s = await startResponder(
    modernHandler((req) => ({
      sse: [
        '{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}',
        '{"jsonrpc":"2.0","id":"srv-2","method":"ping"}',
        toolResultText(req.message?.id, TRANSACTION_JSON),
      ],
    })),
  )
  servers.push(s)
  const c = new PlatformClient({ baseUrl: s.url, secret: SECRET, allowPrivate: true, eraCache: new Map() })
  const out = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  assert.equal(out.kind, 'result')
  assert.deepEqual(
    s.requests.map((r) => `${r.method} ${r.message?.method ?? ''}`),
    ['POST server/discover', 'POST tools/call'],
  )
  for (const r of s.requests) {
    assert.equal(r.headers['last-event-id'], undefined)
    assert.equal(
      Object.keys(r.headers).some((h) => h.startsWith('mcp-param-') || h === 'idempotency-key'),
      false,
    )
  }
})

test('a stream cut before the answer counts as 5xx and is retried', async () => {
  const s = await startResponder(modernHandler(() => ({ cut: 'event: message\ndata: {"jsonrpc":"2.0","id":2,"res' })))
  servers.push(s)
  const c = new PlatformClient({
    baseUrl: s.url,
    secret: SECRET,
    allowPrivate: true,
    eraCache: new Map(),
    retryDelayMs: 1,
    maxAttempts: 2,
  })
  await assert.rejects(
    c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT),
    (e: { code: string; retryable: boolean }) => e.code === 'ERR_PLATFORM_NO_ANSWER' && e.retryable,
  )
  assert.equal(s.requests.filter((r) => r.message?.method === 'tools/call').length, 2)
})

test('an answer larger than maxBodyBytes fails with ERR_PLATFORM_BODY_TOO_LARGE', async () => {
  const big = TRANSACTION_JSON.replace('"Pro plan, monthly"', JSON.stringify('x'.repeat(5000)))
  const s = await startResponder(modernHandler((req) => ({ status: 200, body: toolResultText(req.message?.id, big) })))
  servers.push(s)
  const c = new PlatformClient({
    baseUrl: s.url,
    secret: SECRET,
    allowPrivate: true,
    eraCache: new Map(),
    maxBodyBytes: 2048,
  })
  await assert.rejects(c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT), {
    code: 'ERR_PLATFORM_BODY_TOO_LARGE',
  })
})

test('a call that times out is abandoned, never cancelled: no notifications/cancelled, no other request', async () => {
  // tools/call is never answered, so the timeout fires whatever the machine's speed.
  const modern = modernHandler(() => ({ status: 500 }))
  const s = await startResponder((req) =>
    req.message?.method === 'tools/call' ? new Promise<never>(() => {}) : modern(req),
  )
  servers.push(s)
  const c = new PlatformClient({
    baseUrl: s.url,
    secret: SECRET,
    allowPrivate: true,
    eraCache: new Map(),
    timeoutMs: 300,
    maxAttempts: 1,
  })
  await assert.rejects(c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT), {
    code: 'ERR_PLATFORM_TIMEOUT',
  })
  assert.deepEqual(
    s.requests.map((r) => `${r.method} ${r.message?.method ?? ''}`),
    ['POST server/discover', 'POST tools/call'],
  )
})
