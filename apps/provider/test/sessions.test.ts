// Legacy sessions: capped, closed when idle, unknown ids answered 404, and SSE responses when configured.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { connect, signedSend, startTestProvider } from './helpers.js'

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
})

const send = signedSend

test('sessions are capped (503 beyond the cap) and idle ones are closed to make room', async () => {
  let clock = 1_000_000
  const p = await startTestProvider({ maxSessions: 2, sessionIdleTtlMs: 60_000, now: () => clock })
  try {
    const a = await send(p.url, 'POST', INIT)
    const b = await send(p.url, 'POST', INIT)
    assert.equal(a.status, 200)
    assert.equal(b.status, 200)
    const full = await send(p.url, 'POST', INIT)
    assert.equal(full.status, 503)
    assert.equal(JSON.parse(full.text).error.code, -32000)
    // DELETE frees a slot at once.
    assert.equal((await send(p.url, 'DELETE', '', { 'mcp-session-id': a.session as string })).status, 200)
    const c = await send(p.url, 'POST', INIT)
    assert.equal(c.status, 200)
    // b is used at +30 s; c stays idle. At +61 s c has been idle past the TTL, b has not.
    clock += 30_000
    const ping = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
    assert.equal(
      (await send(p.url, 'POST', ping, { 'mcp-session-id': b.session as string, 'mcp-protocol-version': '2025-11-25' }))
        .status,
      202,
    )
    clock += 31_000
    const d = await send(p.url, 'POST', INIT)
    assert.equal(d.status, 200)
    const onC = await send(p.url, 'POST', ping, {
      'mcp-session-id': c.session as string,
      'mcp-protocol-version': '2025-11-25',
    })
    assert.equal(onC.status, 404)
    const onB = await send(p.url, 'POST', ping, {
      'mcp-session-id': b.session as string,
      'mcp-protocol-version': '2025-11-25',
    })
    assert.equal(onB.status, 202)
  } finally {
    await p.stop()
  }
})

test('a legacy call without a session id is 400; an unknown session id is 404', async () => {
  const p = await startTestProvider()
  try {
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'sr_describe', arguments: {} },
    })
    assert.equal((await send(p.url, 'POST', call)).status, 400)
    assert.equal(
      (await send(p.url, 'POST', call, { 'mcp-session-id': 'nope', 'mcp-protocol-version': '2025-11-25' })).status,
      404,
    )
  } finally {
    await p.stop()
  }
})

test('legacy and modern responses can be SSE instead of JSON; the clients read both', async () => {
  const p = await startTestProvider({ legacyResponseMode: 'sse', responseMode: 'sse' })
  try {
    const init = await send(p.url, 'POST', INIT)
    assert.equal(init.type, 'text/event-stream')
    const modern = await send(
      p.url,
      'POST',
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: {
          name: 'sr_describe',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }),
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'sr_describe' },
    )
    assert.equal(modern.type, 'text/event-stream')
    assert.match(modern.text, /^event: message\ndata: \{"result":\{"content"/m)
    for (const era of ['modern', 'legacy', 'v1'] as const) {
      const c = await connect(p.url, era)
      const r = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      assert.deepEqual(r.structuredContent?.amount, { amount_minor: 4999, currency: 'USD' })
      await c.close()
    }
  } finally {
    await p.stop()
  }
})

test('retention below 30 days is refused at start', async () => {
  await assert.rejects(startTestProvider({ retentionDays: 29 }), RangeError)
})
