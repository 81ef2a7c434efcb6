// Every HTTP request is verified over its raw bytes before the SDK reads it: handshake, tool call and DELETE.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { signHeaders } from '@tollgate/signing'
import {
  connect,
  demoBilling,
  type Era,
  SECRET,
  type SigningOptions,
  startTestProvider,
  type TestProvider,
} from './helpers.js'

const REJECTED =
  '{"error":{"code":"credentials_rejected","message":"the request signature was not accepted","retryable":false}}'

const CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: {
    name: 'sr_get_transaction',
    arguments: { transaction_ref: 'ch_1001' },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
})
const MODERN_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'sr_get_transaction',
}

async function post(url: string, body: string, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', body, headers })
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
}

function signed(url: string, body: string, secret = SECRET, host?: string, path?: string, when?: Date) {
  const u = new URL(url)
  return signHeaders(
    secret,
    { method: 'POST', host: host ?? u.host, path: path ?? u.pathname, body: Buffer.from(body), key: '' },
    when,
  )
}

describe('signatures', () => {
  let p: TestProvider
  before(async () => {
    p = await startTestProvider()
  })
  after(async () => {
    await p.stop()
  })

  test('a correctly signed modern tool call is served', async () => {
    const r = await post(p.url, CALL, { ...MODERN_HEADERS, ...signed(p.url, CALL) })
    assert.equal(r.status, 200)
    assert.match(r.text, /"structuredContent":\{"transaction_ref":"ch_1001"/)
  })

  for (const era of ['modern', 'legacy', 'v1'] as Era[]) {
    test(`${era}: a tampered tool call after a correctly signed handshake gets 401 with the envelope`, async () => {
      const log: NonNullable<SigningOptions['log']> = []
      const c = await connect(p.url, era, { log, mutate: (_m, rpc) => (rpc === 'tools/call' ? 'tamper' : undefined) })
      await assert.rejects(c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }))
      await c.close().catch(() => {})
      const handshake = log.filter((l) => l.rpc === 'server/discover' || l.rpc === 'initialize')
      assert.equal(handshake.length, 1)
      assert.equal(handshake[0]?.status, 200)
      const call = log.find((l) => l.rpc === 'tools/call')
      assert.equal(call?.status, 401)
      assert.equal(call?.contentType, 'application/json')
      assert.equal(call?.body, REJECTED)
    })

    test(`${era}: a stale timestamp (10 minutes old) gets 401`, async () => {
      const log: NonNullable<SigningOptions['log']> = []
      const c = await connect(p.url, era, { log, mutate: (_m, rpc) => (rpc === 'tools/call' ? 'stale' : undefined) })
      await assert.rejects(c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }))
      await c.close().catch(() => {})
      const call = log.find((l) => l.rpc === 'tools/call')
      assert.equal(call?.status, 401)
      assert.equal(call?.body, REJECTED)
    })
  }

  test('a stale, unsigned, wrong-secret or wrong-path request is refused with the same bytes', async () => {
    const stale = signed(p.url, CALL, SECRET, undefined, undefined, new Date(Date.now() - 6 * 60_000))
    const cases = [
      {},
      stale,
      signed(p.url, CALL, 'srmps_other_secret_000000000000'),
      signed(p.url, CALL, SECRET, undefined, '/other'),
      signed(p.url, CALL, SECRET, 'evil.example'),
    ]
    for (const h of cases) {
      const r = await post(p.url, CALL, { ...MODERN_HEADERS, ...h })
      assert.equal(r.status, 401)
      assert.equal(r.type, 'application/json')
      assert.equal(r.text, REJECTED)
    }
  })

  test('DELETE is verified too: an unsigned DELETE cannot close a session', async () => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    })
    const init = await fetch(p.url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...signed(p.url, body),
      },
    })
    const session = init.headers.get('mcp-session-id')
    await init.text()
    assert.equal(typeof session, 'string')
    const unsigned = await fetch(p.url, { method: 'DELETE', headers: { 'mcp-session-id': session as string } })
    assert.equal(unsigned.status, 401)
    assert.equal(await unsigned.text(), REJECTED)
    const u = new URL(p.url)
    const del = await fetch(p.url, {
      method: 'DELETE',
      headers: {
        'mcp-session-id': session as string,
        ...signHeaders(SECRET, { method: 'DELETE', host: u.host, path: u.pathname, body: Buffer.alloc(0), key: '' }),
      },
    })
    assert.equal(del.status, 200)
    // The session is gone: a later signed request on it is 404.
    const gone = await fetch(p.url, {
      method: 'DELETE',
      headers: {
        'mcp-session-id': session as string,
        ...signHeaders(SECRET, { method: 'DELETE', host: u.host, path: u.pathname, body: Buffer.alloc(0), key: '' }),
      },
    })
    assert.equal(gone.status, 404)
    await gone.text()
  })

  test('GET is answered 405 (no standalone stream), after verification', async () => {
    const u = new URL(p.url)
    const res = await fetch(p.url, {
      headers: signHeaders(SECRET, { method: 'GET', host: u.host, path: u.pathname, body: Buffer.alloc(0), key: '' }),
    })
    assert.equal(res.status, 405)
    assert.equal(res.headers.get('allow'), 'POST, DELETE')
    await res.text()
  })

  test('a body over the cap is refused with 413 before verification', async () => {
    const big = 'x'.repeat(1024 * 1024 + 1)
    const r = await post(p.url, big, { ...MODERN_HEADERS, ...signed(p.url, big) })
    assert.equal(r.status, 413)
  })
})

describe('deployment options', () => {
  test('behind a proxy: the public host and the stripped prefix are what the signature covers', async () => {
    const p = await startTestProvider({ publicHost: 'billing.example.com', stripPrefix: '/payments' })
    try {
      const good = signed(p.url, CALL, SECRET, 'billing.example.com', '/payments/mcp')
      assert.equal((await post(p.url, CALL, { ...MODERN_HEADERS, ...good })).status, 200)
      // Signed over what reached us instead of what the platform sent: refused.
      assert.equal((await post(p.url, CALL, { ...MODERN_HEADERS, ...signed(p.url, CALL) })).status, 401)
    } finally {
      await p.stop()
    }
  })

  test('bearer token and edge headers are required when configured', async () => {
    const p = await startTestProvider({ bearerToken: 'tok_123456', edgeHeaders: { 'X-Edge-Key': 'edge-secret' } })
    try {
      const sig = signed(p.url, CALL)
      const all = { ...MODERN_HEADERS, ...sig, authorization: 'Bearer tok_123456', 'x-edge-key': 'edge-secret' }
      assert.equal((await post(p.url, CALL, all)).status, 200)
      for (const drop of [{ authorization: 'Bearer tok_000000' }, { 'x-edge-key': 'nope' }]) {
        const r = await post(p.url, CALL, { ...all, ...drop })
        assert.equal(r.status, 401)
        assert.equal(r.text, REJECTED)
      }
      const c = await connect(p.url, 'modern', {
        extraHeaders: { authorization: 'Bearer tok_123456', 'x-edge-key': 'edge-secret' },
      })
      assert.equal((await c.callTool('sr_describe', {})).isError ?? false, false)
      await c.close()
    } finally {
      await p.stop()
    }
  })

  test('production refuses a sandbox secret, accepts two srmp_ secrets while rotating', async () => {
    await assert.rejects(
      startTestProvider({ secrets: ['srmps_sandbox_0000000000000000'], environment: 'production' }),
      { code: 'ERR_SIGNING_SECRET_FORMAT' },
    )
    const oldS = 'srmp_old_0123456789abcdef0123456789'
    const newS = 'srmp_new_fedcba9876543210fedcba9876'
    // Production needs a billing port of its own (the demo ledger runs in the sandbox only).
    const demo = await demoBilling()
    const p = await startTestProvider({ secrets: [oldS, newS], billing: demo.billing })
    try {
      for (const secret of [oldS, newS]) {
        const c = await connect(p.url, 'modern', { secret })
        assert.equal((await c.callTool('sr_describe', {})).isError ?? false, false)
        await c.close()
      }
      const sandbox = await post(p.url, CALL, { ...MODERN_HEADERS, ...signed(p.url, CALL, SECRET) })
      assert.equal(sandbox.status, 401)
    } finally {
      await p.stop()
      await demo.dispose()
    }
  })

  test('no secret refuses to start', async () => {
    await assert.rejects(startTestProvider({ secrets: [] }), { code: 'ERR_PROVIDER_NO_SECRET' })
  })
})
