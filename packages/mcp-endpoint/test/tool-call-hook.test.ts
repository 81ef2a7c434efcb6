// aroundToolCall, the declared hook around tool calls: over real HTTP with the official clients (SDK v1, SDK v2 on
// the 2025 era, SDK v2 on 2026-07-28), it runs around every tools/call and nothing else, may answer itself instead of
// serving, and may replace the head of the SDK's 200 answer (a 503 with Retry-After).
import assert from 'node:assert/strict'
import { afterEach, describe, test } from 'node:test'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { AroundToolCall } from '../src/index.ts'
import { type Running, startDoor } from './fixture.ts'

type ClientPath = 'v1' | 'v2-legacy' | 'v2-modern'
const PATHS: ClientPath[] = ['v1', 'v2-legacy', 'v2-modern']

interface Seen {
  statuses: number[]
}

/** One official client on `path`, its fetch recording the status of every answer. */
async function connect(path: ClientPath, url: string, seen: Seen) {
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init)
    seen.statuses.push(response.status)
    return response
  }
  if (path === 'v1') {
    const client = new V1Client({ name: 'hook-test-v1', version: '1.0.0' })
    await client.connect(new V1Transport(new URL(url), { fetch: recording }))
    return {
      listTools: () => client.listTools(),
      callTool: () => client.callTool({ name: 'count', arguments: {} }),
      close: () => client.close(),
    }
  }
  const client = new Client(
    { name: 'hook-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: path === 'v2-modern' ? 'auto' : 'legacy' } },
  )
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: recording }))
  return {
    listTools: () => client.listTools(),
    callTool: () => client.callTool({ name: 'count', arguments: {} }),
    close: () => client.close(),
  }
}

/** A door whose endpoint and sessions both take `hook`. */
const doorWith = (hook: AroundToolCall) => startDoor({ aroundToolCall: hook, sessions: { aroundToolCall: hook } })

const eraOf = (path: ClientPath) => (path === 'v2-modern' ? 'modern' : 'legacy')

describe('aroundToolCall', () => {
  let door: Running | undefined
  afterEach(async () => {
    await door?.close()
    door = undefined
  })

  for (const path of PATHS) {
    test(`runs around every tools/call and nothing else, with the serving inside it (${path})`, async () => {
      const steps: string[] = []
      door = await doorWith(async (exchange, serve) => {
        const method = (exchange.message as { method?: string }).method
        steps.push(`before ${exchange.era} ${method} (tool ran ${door?.calls.n ?? 0}×)`)
        await serve(exchange)
        steps.push(`after (tool ran ${door?.calls.n ?? 0}×)`)
      })
      const seen: Seen = { statuses: [] }
      const client = await connect(path, door.url, seen)
      await client.listTools()
      assert.deepEqual(steps, [], 'initialize, notifications and tools/list never meet the hook')
      const result = await client.callTool()
      assert.deepEqual(result.content, [{ type: 'text', text: '1' }])
      assert.deepEqual(steps, [`before ${eraOf(path)} tools/call (tool ran 0×)`, 'after (tool ran 1×)'])
      // 405: the 2025-era clients' standalone GET stream, which the sessions never offer.
      assert.ok(
        seen.statuses.every((s) => s === 200 || s === 202 || s === 405),
        `answers untouched: ${seen.statuses.join(', ')}`,
      )
      await client.close()
    })

    test(`may answer the exchange itself and never serve it: the tool does not run (${path})`, async () => {
      door = await doorWith(async ({ res, message }) => {
        const body = JSON.stringify({
          jsonrpc: '2.0',
          id: (message as { id?: unknown }).id,
          error: { code: -32000, message: 'not now' },
        })
        res.writeHead(429, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) })
        res.end(body)
      })
      const seen: Seen = { statuses: [] }
      const client = await connect(path, door.url, seen)
      await assert.rejects(client.callTool())
      assert.equal(seen.statuses.at(-1), 429)
      assert.equal(door.calls.n, 0)
      await client.close()
    })

    test(`replaceSuccessHead makes the SDK's 200 answer the given head, never a refusal's (${path})`, async () => {
      door = await doorWith(async (exchange, serve) => {
        exchange.replaceSuccessHead({ status: 503, headers: { 'retry-after': '7' } })
        await serve(exchange)
      })
      const seen: Seen = { statuses: [] }
      const client = await connect(path, door.url, seen)
      const url = door.url
      await assert.rejects(client.callTool())
      assert.equal(seen.statuses.at(-1), 503)
      assert.equal(door.calls.n, 1, 'served: only the head was replaced')
      await client.close()
      const raw = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': 'none',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'count' } }),
      })
      // A refusal the sessions write themselves (no such session) is not the SDK's 200: its head stays.
      assert.equal(raw.status, 404)
      assert.equal(raw.headers.get('retry-after'), null)
      assert.match(await raw.text(), /Session not found/)
    })
  }

  test('the replaced head carries the SDK answer and the added headers (2025 era, by hand)', async () => {
    door = await doorWith(async (exchange, serve) => {
      exchange.replaceSuccessHead({ status: 503, headers: { 'retry-after': '7' } })
      await serve(exchange)
    })
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
    const init = await fetch(door.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    })
    await init.text()
    const session = init.headers.get('mcp-session-id') as string
    const call = await fetch(door.url, {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'count', arguments: {} } }),
    })
    assert.equal(call.status, 503)
    assert.equal(call.headers.get('retry-after'), '7')
    assert.equal(call.headers.get('content-type'), 'application/json')
    assert.deepEqual(JSON.parse(await call.text()), {
      result: { content: [{ type: 'text', text: '1' }] },
      jsonrpc: '2.0',
      id: 2,
    })
  })
})
