// 2025-era sessions on any replica: two providers on one PostgreSQL database with one session key, no sticky
// routing. A session opened on A continues on B; DELETE on either closes it on both; idle expiry holds on both;
// forged ids and another caller's ids are refused.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { signHeaders } from '@tollgate/signing'
import pg from 'pg'
import { type FetchLike, SECRET, signedSend, startTestProvider, type TestProvider } from './helpers.js'
import { PG_URL, probePostgres } from './postgres.js'

const pgSkip = await probePostgres()

const SESSION_KEY = 'replica-test-session-key-0123456789abcdef'
const LEGACY = '2025-11-25'
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 't', version: '1' } },
})
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
const CALL = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'sr_get_transaction', arguments: { transaction_ref: 'ch_1001' } },
})

// Every request says 2025-11-25, as a 2025-era client after initialize does.
const send = (url: string, method: string, body: string, headers: Record<string, string> = {}) =>
  signedSend(url, method, body, { 'mcp-protocol-version': LEGACY, ...headers })

describe('2025-era sessions across two replicas on PostgreSQL', { skip: pgSkip }, () => {
  const schema = `tollgate_provider_r${process.pid}_${Date.now().toString(36)}`
  const started: TestProvider[] = []
  let clock = 5_000_000
  const replica = async (extra: Record<string, unknown> = {}) => {
    const p = await startTestProvider({
      store: { kind: 'postgres', connectionString: PG_URL, schema },
      sessionKey: SESSION_KEY,
      sessionIdleTtlMs: 60_000,
      now: () => clock,
      ...extra,
    })
    started.push(p)
    return p
  }
  after(async () => {
    for (const p of started) await p.stop()
    const c = new pg.Client({ connectionString: PG_URL })
    await c.connect()
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await c.end()
  })

  test('initialize on A, initialized on B, call on A, DELETE on B: then refused on both', async () => {
    const a = await replica()
    const b = await replica()
    const init = await send(a.url, 'POST', INIT)
    assert.equal(init.status, 200)
    const id = init.session as string
    assert.match(id, /^[\x21-\x7e]+$/)
    const s = { 'mcp-session-id': id }
    assert.equal((await send(b.url, 'POST', INITIALIZED, s)).status, 202)
    const call = await send(a.url, 'POST', CALL, s)
    assert.equal(call.status, 200)
    assert.match(call.text, /"transaction_ref":"ch_1001"/)
    assert.equal((await send(b.url, 'POST', CALL, s)).status, 200)
    assert.equal((await send(b.url, 'DELETE', '', s)).status, 200)
    for (const r of [a, b]) {
      const after = await send(r.url, 'POST', CALL, s)
      assert.equal(after.status, 404)
      assert.equal(JSON.parse(after.text).error.code, -32001)
    }
    assert.equal((await send(a.url, 'DELETE', '', s)).status, 404)
  })

  test('an idle session expires on every replica', async () => {
    const a = await replica()
    const b = await replica()
    const id = (await send(a.url, 'POST', INIT)).session as string
    clock += 30_000
    assert.equal((await send(b.url, 'POST', CALL, { 'mcp-session-id': id })).status, 200)
    clock += 59_000 // seen 59 s ago: still open
    assert.equal((await send(a.url, 'POST', CALL, { 'mcp-session-id': id })).status, 200)
    clock += 61_000
    assert.equal((await send(b.url, 'POST', CALL, { 'mcp-session-id': id })).status, 404)
    assert.equal((await send(a.url, 'POST', CALL, { 'mcp-session-id': id })).status, 404)
  })

  test('a forged or altered id, and an id used by another caller, are refused', async () => {
    const a = await replica()
    const id = (await send(a.url, 'POST', INIT)).session as string
    const flipped = id.slice(0, -1) + (id.endsWith('A') ? 'B' : 'A')
    const guessed = Buffer.alloc(32, 7).toString('base64url')
    for (const bad of [flipped, guessed, `${id}x`, 'not-a-session']) {
      assert.equal((await send(a.url, 'POST', CALL, { 'mcp-session-id': bad })).status, 404)
    }
    // Another caller: a replica of the same deployment admitting a different bearer token.
    const token = 'another-callers-token-0123456789'
    const other = await replica({ bearerToken: token })
    const auth = { authorization: `Bearer ${token}` }
    assert.equal((await send(other.url, 'POST', CALL, { ...auth, 'mcp-session-id': id })).status, 404)
    // …while its own session works there, and not on A (whose caller is the bare signing tenant).
    const own = (await send(other.url, 'POST', INIT, auth)).session as string
    assert.equal((await send(other.url, 'POST', CALL, { ...auth, 'mcp-session-id': own })).status, 200)
    assert.equal((await send(a.url, 'POST', CALL, { 'mcp-session-id': own })).status, 404)
    // A replica with another session key cannot verify A's ids either.
    const foreignKey = await replica({ sessionKey: 'some-other-deployment-key-0123456789abcdef' })
    assert.equal((await send(foreignKey.url, 'POST', CALL, { 'mcp-session-id': id })).status, 404)
  })

  test('the official v1 client completes a whole session with every request on the other replica', async () => {
    const a = await replica()
    const b = await replica()
    const urls = [a.url, b.url]
    let turn = 0
    const seen: string[] = []
    // Round-robin with no stickiness, as a plain load balancer does; the signing fetch signs the replica it reaches.
    const roundRobin: FetchLike = async (_input, init) => {
      const target = urls[turn++ % 2] as string
      seen.push(`${init?.method ?? 'GET'} ${target === a.url ? 'A' : 'B'}`)
      return fetch(target, init)
    }
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const client = new Client({ name: 'rr', version: '1' })
    const transport = new StreamableHTTPClientTransport(new URL(a.url), {
      fetch: async (input, init = {}) => {
        const u = new URL(urls[turn % 2] as string)
        const method = (init.method ?? 'GET').toUpperCase()
        const body = typeof init.body === 'string' ? init.body : ''
        const headers = new Headers(init.headers)
        for (const [k, v] of Object.entries(
          signHeaders(SECRET, { method, host: u.host, path: u.pathname, body: Buffer.from(body), key: '' }),
        ))
          headers.set(k, v)
        return roundRobin(input, { ...init, headers })
      },
    })
    await client.connect(transport)
    const r = await client.callTool({ name: 'sr_get_transaction', arguments: { transaction_ref: 'ch_1001' } })
    assert.equal((r.structuredContent as { transaction_ref?: string }).transaction_ref, 'ch_1001')
    await transport.terminateSession()
    await client.close()
    // Both replicas served parts of the one session, including the DELETE.
    assert.ok(seen.some((x) => x.endsWith('A')) && seen.some((x) => x.endsWith('B')), seen.join(', '))
    assert.ok(
      seen.some((x) => x.startsWith('DELETE')),
      seen.join(', '),
    )
  })
})
