// A plain HTTP caller of quenchz's rates.window: the same 2026-07-28 tools/call request the SDK v2 client sends
// (headers and body), over keep-alive connections, the answer read whole and checked but not parsed. It costs the
// client little per call, so a load made of it measures the server, not the client (calls.bench.ts, and the
// fairness bench's greedy caller).
import { Agent, request } from 'node:http'

/** One rates.window call; rejects when the answer is not a 200 JSON-RPC result, or is a refusal (isError). */
export type PlainCall = (args: Record<string, string>) => Promise<void>

export function plainCaller(
  serverUrl: string,
  token: string | undefined,
  maxSockets: number,
): { call: PlainCall; close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets })
  const url = new URL(serverUrl)
  let id = 0
  const call: PlainCall = (args) =>
    new Promise<void>((resolve, reject) => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: {
          name: 'rates.window',
          arguments: args,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      })
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'mcp-method': 'tools/call',
            'mcp-name': 'rates.window',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            const answer = Buffer.concat(chunks)
            if (res.statusCode !== 200 || answer.includes('"isError":true') || !answer.includes('"result"'))
              reject(new Error(`a bench call was refused: ${res.statusCode} ${answer.subarray(0, 200).toString()}`))
            else resolve()
          })
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  return { call, close: () => agent.destroy() }
}
