// A small node:http MCP responder for wire edge cases: it records every request's exact bytes and answers
// what the test says (JSON, SSE, cut streams, JSON-RPC errors, hand-written bodies with 2000.0 or duplicate keys).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Recorded {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: Buffer
  /** JSON.parse of the body (test-side convenience only), undefined when empty. */
  message: { id?: number; method?: string; params?: Record<string, unknown> } | undefined
}

export type Reply =
  | { status: number; headers?: Record<string, string>; body?: string }
  /** An SSE answer: each string is one event's data; keepOpen leaves the stream open afterwards. */
  | { sse: string[]; keepOpen?: boolean }
  /** Writes these bytes as a 200 SSE answer, then destroys the connection mid-stream. */
  | { cut: string }
  /** Closes the connection without any answer (a dropped connection). */
  | { drop: true }

export interface Responder {
  url: string
  requests: Recorded[]
  close(): Promise<void>
}

export async function startResponder(handler: (req: Recorded) => Reply | Promise<Reply>): Promise<Responder> {
  const requests: Recorded[] = []
  const open = new Set<ServerResponse>()
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    const recorded: Recorded = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      message: body.length > 0 ? tryParse(body) : undefined,
    }
    requests.push(recorded)
    const reply = await handler(recorded)
    if ('drop' in reply) {
      req.socket.destroy()
      return
    }
    if ('cut' in reply) {
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.write(reply.cut)
      setTimeout(() => res.destroy(), 10)
      return
    }
    if ('sse' in reply) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      for (const data of reply.sse) res.write(`event: message\ndata: ${data}\n\n`)
      if (reply.keepOpen) {
        open.add(res)
        res.on('close', () => open.delete(res))
      } else res.end()
      return
    }
    res.writeHead(reply.status, { 'content-type': 'application/json', ...(reply.headers ?? {}) })
    res.end(reply.body ?? '')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    async close() {
      for (const res of open) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** A JSON-RPC answer body as text. */
export function rpcResult(id: number | undefined, result: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, result })
}

/** A tools/call result carrying structuredContent given as raw JSON text (so tests can write 2000.0). */
export function toolResultText(id: number | undefined, structuredJson: string, extra = ''): string {
  return `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"x"}],"structuredContent":${structuredJson}${extra}}}`
}

export const DISCOVER_RESULT = {
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: { listChanged: false } },
  resultType: 'complete',
  ttlMs: 0,
  cacheScope: 'private',
}

/** The seed's charge ch_1001 as a contract-valid transaction, written as JSON text. */
export const TRANSACTION_JSON =
  '{"transaction_ref":"ch_1001","customer_ref":"cus_1001","order_ref":null,"subscription_ref":"sub_1001",' +
  '"state":"succeeded","amount":{"amount_minor":4999,"currency":"USD"},"created_at":"2026-10-12T09:00:00Z",' +
  '"description":"Pro plan, monthly","product_type":null,"charge_type":"renewal","processor":"in_house",' +
  '"refund_route":"provider","card_last4":"4242","card_brand":"visa","disputed":false,"refunds":[],"settlement":null}'

/**
 * A well-behaved 2026-07-28 server for the happy path; `tool` answers tools/call with a full body text.
 * Anything else answers -32601.
 */
export function modernHandler(tool: (req: Recorded) => Reply): (req: Recorded) => Reply {
  return (req) => {
    const m = req.message
    if (m?.method === 'server/discover') return { status: 200, body: rpcResult(m.id, DISCOVER_RESULT) }
    if (m?.method === 'tools/call') return tool(req)
    return {
      status: 404,
      body: JSON.stringify({ jsonrpc: '2.0', id: m?.id ?? null, error: { code: -32601, message: 'Method not found' } }),
    }
  }
}

/**
 * A legacy server (no server/discover: 404 -32601) with optional sessions; `tool` answers tools/call.
 */
export function legacyHandler(tool: (req: Recorded) => Reply, sessionId?: string): (req: Recorded) => Reply {
  return (req) => {
    const m = req.message
    if (req.method === 'DELETE') return { status: 200 }
    if (m?.method === 'initialize') {
      return {
        status: 200,
        headers: sessionId ? { 'mcp-session-id': sessionId } : {},
        body: rpcResult(m.id, {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 't', version: '1' },
        }),
      }
    }
    if (m?.method === 'notifications/initialized') return { status: 202 }
    if (m?.method === 'tools/call') return tool(req)
    return {
      status: 404,
      body: JSON.stringify({ jsonrpc: '2.0', id: m?.id ?? null, error: { code: -32601, message: 'Method not found' } }),
    }
  }
}

// REST bodies are plain objects, not JSON-RPC messages; the field is a convenience either way.
function tryParse(body: Buffer): Recorded['message'] {
  try {
    return JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
}
