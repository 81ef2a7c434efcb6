// The door runs the SDK's era classifier once per distinct `_meta` of plain 2026-07-28 tools/calls, not once per
// call (its zod validation keeps each call's objects alive into the old space: see `classify` in endpoint.ts), and
// never lets a kept verdict answer for a request the SDK would refuse. Real HTTP, the door's own fixture.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { modernToolCall, writeToolResult } from '../src/index.ts'
import { startDoor } from './fixture.ts'

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}
const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'count',
}

async function call(url: string, id: number, meta: Record<string, unknown>) {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'count', _meta: meta } })
  const res = await fetch(url, { method: 'POST', headers: HEADERS, body })
  return { status: res.status, text: await res.text() }
}

/** A door whose fast path answers every plain modern tools/call with `fast`, counting them. */
async function doorWithFastPath() {
  const fast = { n: 0 }
  const door = await startDoor({
    allowList: false,
    fastPath: async ({ req, message }, res) => {
      const plain = modernToolCall(message, req.headers)
      if (plain === undefined) return false
      fast.n++
      writeToolResult(res, plain.id, Buffer.from('{"content":[{"type":"text","text":"fast"}]'), '')
      return true
    },
  })
  return { door, fast }
}

test('repeated plain tools/calls with one _meta meet the SDK classifier once; each is still answered', async () => {
  const { door, fast } = await doorWithFastPath()
  try {
    const before = door.endpoint.sdkClassified
    for (let id = 1; id <= 20; id++) {
      const r = await call(door.url, id, META)
      assert.equal(r.status, 200)
      assert.deepEqual(JSON.parse(r.text), {
        result: { content: [{ type: 'text', text: 'fast' }] },
        jsonrpc: '2.0',
        id,
      })
    }
    assert.equal(fast.n, 20)
    assert.equal(door.endpoint.sdkClassified - before, 1)
    // A different _meta is a different verdict: classified once more.
    const other = { ...META, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } }
    assert.equal((await call(door.url, 21, other)).status, 200)
    assert.equal((await call(door.url, 22, other)).status, 200)
    assert.equal(door.endpoint.sdkClassified - before, 2)
  } finally {
    await door.close()
  }
})

test("a _meta the SDK refuses is refused every time with the SDK's answer, never from a kept verdict", async () => {
  const { door, fast } = await doorWithFastPath()
  try {
    assert.equal((await call(door.url, 1, META)).status, 200)
    const bad = { ...META, 'io.modelcontextprotocol/clientCapabilities': { roots: 5 } }
    const before = door.endpoint.sdkClassified
    const first = await call(door.url, 2, bad)
    const second = await call(door.url, 2, bad)
    assert.equal(first.status, 400)
    assert.equal(second.text, first.text)
    assert.match(first.text, /Invalid _meta envelope/)
    assert.equal(door.endpoint.sdkClassified - before, 2)
    assert.equal(fast.n, 1)
  } finally {
    await door.close()
  }
})
