// One request signed as the platform signs it, over the bench's keep-alive agent: how the benches check a server's
// answers before and after loading it (the load itself comes from load-process.ts, in another process).
import http from 'node:http'
import { signHeaders } from '@tollgate/signing'

export interface Reply {
  status: number
  headers: http.IncomingHttpHeaders
  body: string
}

/** A sender signing with `secret`; `key` is the idempotency key the signature covers (REST), if any. */
export function signedSender(secret: string, agent: http.Agent) {
  return (url: URL, method: string, body: string, headers: Record<string, string>, key = ''): Promise<Reply> => {
    const signed = signHeaders(secret, { method, host: url.host, path: url.pathname, body: Buffer.from(body), key })
    return new Promise((resolve, reject) => {
      const req = http.request(
        url,
        {
          method,
          agent,
          headers: { ...headers, ...signed, ...(body !== '' && { 'content-length': Buffer.byteLength(body) }) },
        },
        (res) => {
          let data = ''
          res.setEncoding('utf8')
          res.on('data', (c: string) => {
            data += c
          })
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }))
        },
      )
      req.on('error', reject)
      req.end(body)
    })
  }
}
