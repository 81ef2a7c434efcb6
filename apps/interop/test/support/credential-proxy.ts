// A forwarding proxy that adds the credentials our servers require and generic MCP clients cannot send: the
// platform's HMAC signature (the provider) or a bearer token (quenchz). It forwards the client's own Host header
// and bytes unchanged, so a test about Host (dns-rebinding-protection) still reaches the server's own check; the
// signature covers that Host, as the platform's would.
import { createServer, type IncomingHttpHeaders, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { signHeaders } from '@tollgate/signing'

export type Credential = { kind: 'hmac'; secret: string } | { kind: 'bearer'; token: string }

export interface CredentialProxy {
  /** The proxy's URL for the target's path (e.g. http://127.0.0.1:PORT/mcp). */
  url: string
  close(): Promise<void>
}

// Connection-level headers are the hop's own, never forwarded (RFC 9110 §7.6.1).
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te'])

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value
  }
  return out
}

/** Starts a proxy on 127.0.0.1:0 in front of `target` (a URL whose origin is used; the path comes from the client). */
export async function startCredentialProxy(
  target: string,
  credential: Credential,
  /** Sees each answer's body (first 64 KiB) once it is complete. */
  onAnswer?: (body: string) => void,
): Promise<CredentialProxy> {
  const upstream = new URL(target)
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const headers = forwardable(req.headers)
      const method = req.method ?? 'GET'
      const path = (req.url ?? '/').split('?')[0] ?? '/'
      if (credential.kind === 'hmac') {
        const host = req.headers.host ?? ''
        Object.assign(headers, signHeaders(credential.secret, { method, host, path, body }))
      } else {
        headers.authorization = `Bearer ${credential.token}`
      }
      headers['content-length'] = String(body.length)
      const out = request(
        { host: upstream.hostname, port: upstream.port, method, path: req.url, headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers))
          if (onAnswer !== undefined) {
            let seen = ''
            answer.setEncoding('utf8')
            answer.on('data', (c: string) => {
              if (seen.length < 65_536) seen += c
            })
            answer.on('end', () => onAnswer(seen))
          }
          // Streams (SSE) pass through as they come.
          answer.pipe(res)
        },
      )
      out.on('error', () => {
        if (!res.headersSent) res.writeHead(502)
        res.end()
      })
      res.on('close', () => out.destroy())
      out.end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
