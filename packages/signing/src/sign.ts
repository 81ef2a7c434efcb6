import { createHmac } from 'node:crypto'

export const TIMESTAMP_HEADER = 'X-SupportRoute-Timestamp'
export const SIGNATURE_HEADER = 'X-SupportRoute-Signature'

/** What a signature covers. Over MCP `key` is always empty: the idempotency key travels inside the body. */
export interface SignedRequest {
  method: string
  /** The Host header as the platform sent it; compared lower-cased. */
  host: string
  /** The escaped path as sent, without the query string. */
  path: string
  body: Uint8Array
  key?: string
}

/** `v1=` + hex HMAC-SHA256 of `{timestamp}\n{METHOD}\n{host}\n{path}\n{key}\n{body}` (body as raw bytes). */
export function signatureFor(secret: string, timestamp: string, req: SignedRequest): string {
  const mac = createHmac('sha256', secret)
  mac.update(`${timestamp}\n${req.method.toUpperCase()}\n${req.host.toLowerCase()}\n${req.path}\n${req.key ?? ''}\n`)
  mac.update(req.body)
  return `v1=${mac.digest('hex')}`
}

/** Both signature headers for a request, stamped with `now` (Unix seconds). */
export function signHeaders(secret: string, req: SignedRequest, now: Date = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000))
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signatureFor(secret, timestamp, req) }
}
