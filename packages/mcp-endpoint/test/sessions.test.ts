// Session ids verify themselves and bind their owner; the in-memory store enforces idle expiry and the caps; the
// 2025-era leg over real HTTP refuses forged, foreign and deleted ids; allowed hosts default to loopback + public.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { defaultAllowList, hostGuard, MemorySessionStore, SessionIds } from '../src/index.ts'
import { INIT, post, startDoor } from './fixture.ts'

test('a session id verifies only for its owner, under its key, unaltered', () => {
  const ids = new SessionIds('k'.repeat(32))
  const { id, key } = ids.mint('alice')
  assert.match(id, /^[A-Za-z0-9_-]{43}$/)
  assert.equal(ids.verify(id, 'alice'), key)
  assert.equal(ids.verify(id, 'bob'), undefined)
  assert.equal(new SessionIds('j'.repeat(32)).verify(id, 'alice'), undefined)
  const flipped = (id[0] === 'A' ? 'B' : 'A') + id.slice(1)
  assert.equal(ids.verify(flipped, 'alice'), undefined)
  assert.equal(ids.verify(`${id}A`, 'alice'), undefined)
  assert.throws(() => new SessionIds('short'), { code: 'ERR_MCP_ENDPOINT_CONFIG' })
})

test('the memory store: idle sessions expire, the total cap refuses, the per-owner cap evicts the oldest', async () => {
  const s = new MemorySessionStore()
  const caps = { idleMs: 100, maxSessions: 3, maxPerOwner: 2 }
  assert.equal(await s.open('a1', 'a', 0, caps), true)
  assert.equal(await s.open('a2', 'a', 10, caps), true)
  assert.equal(await s.open('a3', 'a', 20, caps), true) // evicts a1, a's oldest
  assert.equal(await s.touch('a1', 30, 100), false)
  assert.equal(await s.open('b1', 'b', 30, caps), true)
  assert.equal(await s.open('c1', 'c', 40, caps), false) // three open: full
  assert.equal(await s.touch('a2', 109, 100), true) // seen 99 ms ago
  assert.equal(await s.touch('a3', 121, 100), false) // 101 ms idle
  assert.equal(await s.close('b1', 125, 100), true)
  assert.equal(await s.close('b1', 125, 100), false)
  assert.equal(await s.open('c1', 'c', 130, caps), true)
})

test('over HTTP: DELETE closes, a forged id is 404, GET is 405, a second initialize on a session is refused', async () => {
  const door = await startDoor({ allowList: false })
  try {
    const init = await post(door.url, INIT)
    assert.equal(init.status, 200)
    const id = init.session as string
    const list = (sid: string) =>
      post(door.url, '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}', {
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-11-25',
      })
    assert.equal((await list(id)).status, 200)
    assert.equal((await list(`${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`)).status, 404)
    assert.equal((await post(door.url, INIT, { 'mcp-session-id': id })).status, 400)
    assert.equal((await fetch(door.url, { headers: { 'mcp-session-id': id } })).status, 405)
    assert.equal((await fetch(door.url, { method: 'DELETE', headers: { 'mcp-session-id': id } })).status, 200)
    assert.equal((await list(id)).status, 404)
    assert.equal((await post(door.url, '{"jsonrpc":"2.0","id":3,"method":"tools/list"}')).status, 400)
  } finally {
    await door.close()
  }
})

test('allowed hosts default to loopback plus the configured public host, with its http and https origins', () => {
  const guard = hostGuard(defaultAllowList(['https://mcp.example.com/mcp']))
  assert.deepEqual(guard({ host: 'localhost:8080' }), { ok: true })
  assert.deepEqual(guard({ host: '[::1]:1' }), { ok: true })
  assert.deepEqual(guard({ host: 'mcp.example.com', origin: 'https://mcp.example.com' }), { ok: true })
  assert.equal(guard({ host: 'evil.example' }).ok, false)
  assert.deepEqual(guard({ host: 'mcp.example.com', origin: 'https://evil.example' }), {
    ok: false,
    status: 403,
    body: 'Invalid Origin header',
  })
})

test('a body the strict reader refuses is -32700 at the door on both eras and never reaches the tool', async () => {
  const door = await startDoor({ allowList: false })
  try {
    const bodies = [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","name":"count"}}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{}},"x":1e999}',
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","_meta":${'['.repeat(70)}${']'.repeat(70)}}}`,
      '\uFEFF{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count"}}',
    ]
    const init = await post(door.url, INIT)
    for (const body of bodies) {
      for (const headers of <Record<string, string>[]>[
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'count' },
        { 'mcp-session-id': init.session as string },
      ]) {
        const res = await post(door.url, body, headers)
        assert.equal(res.status, 400)
        assert.equal(JSON.parse(res.text).error.code, -32700)
      }
    }
    assert.equal(door.calls.n, 0)
  } finally {
    await door.close()
  }
})

test("a second initialize is answered with the SDK's own InitializeResult bytes (kept from the first)", async () => {
  const door = await startDoor({ allowList: false })
  try {
    const first = await post(door.url, INIT)
    const before = door.legacy.fastPathAnswered
    const second = await post(door.url, INIT)
    assert.equal(door.legacy.fastPathAnswered - before, 1)
    assert.equal(second.status, 200)
    assert.equal(second.text, first.text)
    assert.notEqual(second.session, first.session)
    // Both sessions are real.
    for (const sid of [first.session, second.session]) {
      const r = await post(door.url, '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}', {
        'mcp-session-id': sid as string,
      })
      assert.equal(r.status, 200)
    }
  } finally {
    await door.close()
  }
})
