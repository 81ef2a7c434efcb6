// The gate behind the one door: bytes the strict reader refuses never reach a tool or the budget, on both eras,
// with and without MCP headers; and 2025-era sessions continue on another gate sharing Redis and the session key.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { probeRedis } from '@tollgate/test-support'
import { type GatedTool, RedisSessionStore } from '../src/index.ts'
import { FAKE_TOOLS, type Running, startGate } from './support/fixture.ts'

const MODERN = '2026-07-28'
const LEGACY = '2025-06-18'

/** A tool that counts its calls: any hostile body reaching it shows up. */
let calls = 0
const COUNTED: GatedTool = {
  name: 'ledger.add',
  scope: 'rates:read',
  description: 'Counts.',
  inputSchema: {
    type: 'object',
    properties: { amount: { type: 'number' }, dry_run: { type: 'boolean' } },
    required: ['amount', 'dry_run'],
  },
  async call() {
    calls++
    return { ok: true, structuredContent: { n: calls }, text: String(calls) }
  },
}

const META = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}","io.modelcontextprotocol/clientCapabilities":{}}`
const call = (args: string, modern: boolean) =>
  `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ledger.add","arguments":${args}${modern ? `,${META}` : ''}}}`
const HOSTILE = [
  '{"amount":5,"dry_run":true,"dry_run":false}',
  '{"amount":1,"amount":5,"dry_run":false}',
  '{"amount":1,"\\u0061mount":5,"dry_run":false}',
  `{"amount":5,"dry_run":false,"note":${'['.repeat(80)}${']'.repeat(80)}}`,
]
const CLEAN = '{"amount":5,"dry_run":false}'

async function post(g: Running, token: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(g.url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      ...headers,
    },
    body,
  })
  return { status: res.status, session: res.headers.get('mcp-session-id'), text: await res.text() }
}

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
})

describe('hostile bodies at the gate', () => {
  let g: Running
  let token: string
  before(async () => {
    g = await startGate({ tools: [...FAKE_TOOLS, COUNTED] })
    token = await g.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
  })
  after(async () => g.close())

  for (const [name, modern, withHeaders] of [
    ['2026-07-28 with MCP headers', true, true],
    ['2026-07-28 without MCP headers', true, false],
    ['2025-era session with MCP headers', false, true],
    ['2025-era session without MCP headers', false, false],
  ] as const) {
    test(name, async () => {
      let headers: Record<string, string> = {}
      if (modern && withHeaders)
        headers = { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'ledger.add' }
      if (!modern) {
        const session = (await post(g, token, INIT)).session as string
        headers = { 'mcp-session-id': session, ...(withHeaders ? { 'mcp-protocol-version': LEGACY } : {}) }
      }
      const before = calls
      for (const args of HOSTILE) {
        const res = await post(g, token, call(args, modern), headers)
        assert.equal(res.status, 400, args)
        assert.equal(JSON.parse(res.text).error.code, -32700)
      }
      assert.equal(calls, before, 'a hostile body reached the tool')
      // Control: written cleanly, the same call passes the door in this mode (or, modern without headers, reaches
      // the SDK, which answers its own header error).
      const ok = await post(g, token, call(CLEAN, modern), headers)
      if (modern && !withHeaders) assert.equal(JSON.parse(ok.text).error.code, -32020)
      else {
        assert.equal(ok.status, 200, ok.text)
        assert.equal(calls, before + 1)
      }
    })
  }
})

const probe = await probeRedis('gate-door-test')
if (probe.skip !== undefined && process.env.TOLLGATE_REQUIRE_SERVICES === '1') throw new Error(probe.skip)

describe('2025-era sessions across two gates on one Redis', { skip: probe.skip }, () => {
  const KEY = 'gate-replica-test-session-key-0123456789'
  let a: Running
  let b: Running
  let c: Running
  before(async () => {
    const store = () => new RedisSessionStore(probe.redis as NonNullable<typeof probe.redis>, probe.prefix)
    a = await startGate({ sessionStore: store(), sessionKey: KEY })
    // Same issuer: a token minted once is good on every replica.
    b = await startGate({ sessionStore: store(), sessionKey: KEY, issuer: a.issuer })
    c = await startGate({ sessionStore: store(), sessionKey: KEY, issuer: a.issuer, maxSessions: 1 })
  })
  after(async () => {
    await a.close()
    await b.close()
    await c.close()
    await probe.cleanup()
  })

  const list = (g: Running, token: string, session: string) =>
    post(g, token, '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}', {
      'mcp-session-id': session,
      'mcp-protocol-version': LEGACY,
    })

  test('initialize on A, initialized on B, call on A, DELETE on B: then refused on both', async () => {
    const token = await a.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
    const session = (await post(a, token, INIT)).session as string
    const h = { 'mcp-session-id': session, 'mcp-protocol-version': LEGACY }
    assert.equal((await post(b, token, '{"jsonrpc":"2.0","method":"notifications/initialized"}', h)).status, 202)
    const listed = await list(a, token, session)
    assert.equal(listed.status, 200)
    assert.match(listed.text, /calendar\.why/)
    const del = await fetch(b.url, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, ...h } })
    assert.equal(del.status, 200)
    assert.equal((await list(a, token, session)).status, 404)
    assert.equal((await list(b, token, session)).status, 404)
  })

  test("another caller's id, and a forged one, are refused on every replica", async () => {
    const alpha = await a.issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
    const beta = await a.issuer.mint({ subject: 'agent-beta', scopes: ['rates:read'] })
    const session = (await post(a, alpha, INIT)).session as string
    assert.equal((await list(b, alpha, session)).status, 200)
    assert.equal((await list(b, beta, session)).status, 404)
    assert.equal((await list(a, beta, session)).status, 404)
    assert.equal((await list(b, alpha, `${session.slice(0, -2)}AA`)).status, 404)
  })

  test('the session cap is counted across replicas', async () => {
    // c allows one open session in the shared store, which already holds a's and b's: it refuses a new one.
    const gamma = await a.issuer.mint({ subject: 'agent-gamma', scopes: [] })
    assert.equal((await post(c, gamma, INIT)).status, 503)
  })
})
