import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { SignatureVerifier } from '@tollgate/signing'
import { PlatformClient } from '../src/index.js'
import {
  legacyHandler,
  modernHandler,
  type Recorded,
  type Responder,
  startResponder,
  TRANSACTION_JSON,
  toolResultText,
} from './support/responder.js'

const SECRET = 'srmps_wire_test_secret_0123456789'
const CONTEXT = { correlationId: '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6', channel: 'ticket', externalTicket: 'ZD-42' }
const servers: Responder[] = []
after(async () => {
  for (const s of servers) await s.close()
})

async function serve(handler: (req: Recorded) => ReturnType<ReturnType<typeof modernHandler>>): Promise<Responder> {
  const s = await startResponder(handler)
  servers.push(s)
  return s
}

function client(url: string, extra: Partial<ConstructorParameters<typeof PlatformClient>[0]> = {}): PlatformClient {
  return new PlatformClient({
    baseUrl: url,
    secret: SECRET,
    allowPrivate: true,
    eraCache: new Map(),
    retryDelayMs: 1,
    ...extra,
  })
}

function verifies(req: Recorded): boolean {
  const verifier = new SignatureVerifier({ environment: 'sandbox', secrets: [SECRET] })
  const result = verifier.verify(
    {
      timestamp: req.headers['x-supportroute-timestamp'] as string | undefined,
      signature: req.headers['x-supportroute-signature'] as string | undefined,
    },
    { method: req.method, host: String(req.headers.host), path: req.path, body: req.body, key: '' },
  )
  return result.ok
}

test('a 2026-07-28 attempt is server/discover then one stateless tools/call, each signed over the bytes sent', async () => {
  const s = await serve(
    modernHandler((req) => ({ status: 200, body: toolResultText(req.message?.id, TRANSACTION_JSON) })),
  )
  const out = await client(s.url).callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  assert.equal(out.kind, 'result')
  assert.equal(out.kind === 'result' && (out.value as { transaction_ref: string }).transaction_ref, 'ch_1001')
  assert.deepEqual(
    s.requests.map((r) => [r.method, r.message?.method]),
    [
      ['POST', 'server/discover'],
      ['POST', 'tools/call'],
    ],
  )
  for (const r of s.requests) assert.ok(verifies(r), `${r.message?.method} is signed over its bytes`)
  const [discover, call] = s.requests as [Recorded, Recorded]
  assert.equal(discover.headers['mcp-protocol-version'], '2026-07-28')
  assert.equal(discover.headers['mcp-method'], 'server/discover')
  assert.equal(call.headers['mcp-method'], 'tools/call')
  assert.equal(call.headers['mcp-name'], 'sr_get_transaction')
  assert.equal(call.headers['mcp-session-id'], undefined)
  assert.deepEqual(
    Object.keys(call.headers).filter((h) => h.startsWith('mcp-param-')),
    [],
  )
  const meta = call.message?.params?._meta as Record<string, unknown>
  assert.deepEqual(meta['io.modelcontextprotocol/clientCapabilities'], {})
  assert.equal(meta['io.modelcontextprotocol/protocolVersion'], '2026-07-28')
  assert.match(String(meta['dev.supportroute/request_id']), /^[0-9a-f-]{36}$/)
  assert.equal(meta['dev.supportroute/correlation_id'], '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6')
  assert.equal(meta['dev.supportroute/channel'], 'ticket')
  assert.equal(meta['dev.supportroute/external_ticket'], 'ZD-42')
  assert.equal(out.kind === 'result' && out.requestId, meta['dev.supportroute/request_id'])
})

test('each attempt carries a new request_id', async () => {
  const s = await serve(
    modernHandler((req) => ({ status: 200, body: toolResultText(req.message?.id, TRANSACTION_JSON) })),
  )
  const c = client(s.url)
  await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  const ids = s.requests
    .filter((r) => r.message?.method === 'tools/call')
    .map((r) => (r.message?.params?._meta as Record<string, unknown> | undefined)?.['dev.supportroute/request_id'])
  assert.equal(ids.length, 2)
  assert.notEqual(ids[0], ids[1])
})

test('a legacy server is reached by initialize, initialized, tools/call and DELETE of the assigned session', async () => {
  const s = await serve(
    legacyHandler((req) => ({ status: 200, body: toolResultText(req.message?.id, TRANSACTION_JSON) }), 's-1'),
  )
  const c = client(s.url)
  const out = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  assert.equal(out.kind, 'result')
  assert.deepEqual(
    s.requests.map((r) => [r.method, r.message?.method ?? '', r.headers['mcp-session-id'] ?? '']),
    [
      ['POST', 'server/discover', ''],
      ['POST', 'initialize', ''],
      ['POST', 'notifications/initialized', 's-1'],
      ['POST', 'tools/call', 's-1'],
      ['DELETE', '', 's-1'],
    ],
  )
  for (const r of s.requests) assert.ok(verifies(r), `${r.method} ${r.message?.method ?? ''} is signed`)
  const init = s.requests[1]?.message?.params as Record<string, unknown>
  assert.deepEqual(init.capabilities, {})
  assert.equal(s.requests[3]?.headers['mcp-protocol-version'], '2025-11-25')
  assert.equal(
    s.requests.some((r) => r.method === 'GET'),
    false,
  )
  // The era is cached per base URL: the next attempt does not probe server/discover again.
  await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  assert.deepEqual(
    s.requests.slice(5).map((r) => r.message?.method ?? r.method),
    ['initialize', 'notifications/initialized', 'tools/call', 'DELETE'],
  )
})

test('a legacy server that assigns no session gets no DELETE', async () => {
  const s = await serve(
    legacyHandler((req) => ({ status: 200, body: toolResultText(req.message?.id, TRANSACTION_JSON) })),
  )
  await client(s.url).callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  assert.equal(
    s.requests.some((r) => r.method === 'DELETE'),
    false,
  )
})

test('an SSE answer after a notification is read, and a stream left open does not hold the call', async () => {
  const s = await serve(
    modernHandler((req) => ({
      sse: [
        '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}',
        toolResultText(req.message?.id, TRANSACTION_JSON),
      ],
      keepOpen: true,
    })),
  )
  const out = await client(s.url).callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  assert.equal(out.kind, 'result')
})

test('bearer token and edge headers go on every request of the attempt', async () => {
  const s = await serve(
    legacyHandler((req) => ({ status: 200, body: toolResultText(req.message?.id, TRANSACTION_JSON) }), 's-9'),
  )
  await client(s.url, { bearerToken: 'tok-1', edgeHeaders: { 'x-edge-key': 'edge-1' } }).callTool(
    'sr_get_transaction',
    { transaction_ref: 'ch_1001' },
    CONTEXT,
  )
  assert.equal(s.requests.length, 5)
  for (const r of s.requests) {
    assert.equal(r.headers.authorization, 'Bearer tok-1')
    assert.equal(r.headers['x-edge-key'], 'edge-1')
  }
})

test('a broken tool-call signature leaves the handshake signed correctly', async () => {
  const s = await serve(
    modernHandler((req) => ({
      status: verifies(req) ? 200 : 401,
      body: verifies(req)
        ? toolResultText(req.message?.id, TRANSACTION_JSON)
        : '{"error":{"code":"credentials_rejected","message":"no","retryable":false}}',
    })),
  )
  const c = client(s.url)
  await assert.rejects(
    c.attempt('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT, {
      signatureFor: (phase) => (phase === 'tools/call' ? 'broken' : 'valid'),
    }),
    (e: { code: string; status: number; body: Buffer }) =>
      e.code === 'ERR_PLATFORM_HTTP_STATUS' && e.status === 401 && e.body.toString().includes('credentials_rejected'),
  )
  assert.deepEqual(
    s.requests.map((r) => [r.message?.method, verifies(r)]),
    [
      ['server/discover', true],
      ['tools/call', false],
    ],
  )
})
