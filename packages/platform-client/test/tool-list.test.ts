import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { PlatformClient } from '../src/index.js'
import {
  DISCOVER_RESULT,
  modernHandler,
  type Recorded,
  type Responder,
  rpcResult,
  startResponder,
  toolResultText,
} from './support/responder.js'

const SECRET = 'srmps_wire_test_secret_0123456789'
const servers: Responder[] = []
after(async () => {
  for (const s of servers) await s.close()
})

// A schema nested `levels` deep: {"not":{"not":{…{"type":"object"}…}}}.
function nested(levels: number): string {
  return `${'{"not":'.repeat(levels - 1)}{"type":"object"}${'}'.repeat(levels - 1)}`
}

function listing(schema: string) {
  return (req: Recorded) => {
    const m = req.message
    if (m?.method === 'server/discover') return { status: 200, body: rpcResult(m.id, DISCOVER_RESULT) }
    if (m?.method === 'tools/list') {
      return {
        status: 200,
        body: `{"jsonrpc":"2.0","id":${m.id},"result":{"tools":[{"name":"sr_describe","inputSchema":${schema}}]}}`,
      }
    }
    return { status: 404, body: '' }
  }
}

test('tools/list reads a schema far deeper than the 64 levels allowed in a tool result', async () => {
  // The kit measures schema depth itself: the page must be readable, not refused as unreadable JSON.
  const s = await startResponder(listing(nested(200)))
  servers.push(s)
  const c = new PlatformClient({ baseUrl: s.url, secret: SECRET, allowPrivate: true, eraCache: new Map() })
  const out = await c.listTools({ maxPages: 5 })
  assert.equal(out.pages.length, 1)
  const tool = out.pages[0]?.tools[0] as { name: string } | undefined
  assert.equal(tool?.name, 'sr_describe')
})

test('beyond its own limit tools/list fails as too_deep, and a tool result over 64 levels does too', async () => {
  const s = await startResponder(listing(nested(300)))
  servers.push(s)
  const c = new PlatformClient({ baseUrl: s.url, secret: SECRET, allowPrivate: true, eraCache: new Map() })
  await assert.rejects(c.listTools({ maxPages: 5 }), { code: 'ERR_PLATFORM_MALFORMED_BODY', reason: 'too_deep' })

  const deep = await startResponder(
    modernHandler((req) => ({ status: 200, body: toolResultText(req.message?.id, `{"a":${nested(70)}}`) })),
  )
  servers.push(deep)
  const d = new PlatformClient({ baseUrl: deep.url, secret: SECRET, allowPrivate: true, eraCache: new Map() })
  await assert.rejects(
    d.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, { correlationId: 'c', channel: 'ticket' }),
    {
      code: 'ERR_PLATFORM_MALFORMED_BODY',
      reason: 'too_deep',
    },
  )
})
