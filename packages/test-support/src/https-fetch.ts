// A `fetch` that trusts a test CA: node's global fetch cannot be given a CA (its undici Agent is not exported, and
// NODE_EXTRA_CA_CERTS is read only at process start), so this one speaks node:https, with the CA, keep-alive
// connections and streamed answers (the SDK's SSE streams work through it). For the official MCP clients' `fetch`.
import type { IncomingMessage } from 'node:http'
import { Agent, request } from 'node:https'
import { Readable } from 'node:stream'
import type { TLSSocket } from 'node:tls'

export interface HttpsFetch {
  fetch: typeof fetch
  /** Fingerprints (SHA-256) of the server certificates seen, one per new connection, in order. */
  certificates: string[]
  agent: Agent
  close(): void
}

export function httpsFetch(ca: string): HttpsFetch {
  const agent = new Agent({ ca, keepAlive: true })
  const certificates: string[] = []
  const doFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const req = new Request(input, init)
    const body = req.body === null ? undefined : Buffer.from(await req.arrayBuffer())
    return await new Promise<Response>((resolve, reject) => {
      const outgoing = request(
        req.url,
        { method: req.method, headers: Object.fromEntries(req.headers), agent, signal: req.signal },
        (res: IncomingMessage) => {
          const headers = new Headers()
          for (let i = 0; i < res.rawHeaders.length; i += 2)
            headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string)
          const status = res.statusCode ?? 0
          const empty = status === 204 || status === 304 || req.method === 'HEAD'
          if (empty) res.resume()
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              statusText: res.statusMessage ?? '',
              headers,
            }),
          )
        },
      )
      outgoing.on('socket', (socket) => {
        const tls = socket as TLSSocket
        // A socket torn down at once (a request the client aborted) has no peer certificate left to read.
        const note = () => {
          const fingerprint = tls.getPeerCertificate()?.fingerprint256
          if (fingerprint !== undefined) certificates.push(fingerprint)
        }
        if (tls.authorized) return
        tls.once('secureConnect', note)
      })
      outgoing.on('error', reject)
      outgoing.end(body)
    })
  }
  return { fetch: doFetch as typeof fetch, certificates, agent, close: () => agent.destroy() }
}
