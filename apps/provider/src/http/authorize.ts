// Request admission before anything parses the body: optional bearer token and edge headers, then the HMAC
// signature over the exact raw bytes (with the public host and the full path the platform signed).
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { SIGNATURE_HEADER, type SignatureVerifier, TIMESTAMP_HEADER } from '@tollgate/signing'

export interface AdmissionOptions {
  verifier: SignatureVerifier
  /** Host the platform signs (your public host name); default: the request's Host header. */
  publicHost?: string
  /** Prefix a reverse proxy strips before forwarding (e.g. '/billing'); the signature covers it. */
  stripPrefix?: string
  bearerToken?: string
  /** Header name → exact value that every request must carry (e.g. a CDN's shared secret). */
  edgeHeaders?: Record<string, string>
}

export type AdmissionResult = { ok: true } | { ok: false; reason: string }

// Hash both sides first so the comparison is constant-time whatever the lengths.
function sameSecret(given: string | undefined, want: string): boolean {
  const a = createHash('sha256')
    .update(given ?? '')
    .digest()
  const b = createHash('sha256').update(want).digest()
  return timingSafeEqual(a, b) && given !== undefined
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()]
  return Array.isArray(v) ? undefined : v
}

export function createAdmission(options: AdmissionOptions) {
  const edge = Object.entries(options.edgeHeaders ?? {}).map(([k, v]) => [k.toLowerCase(), v] as const)
  const prefix = options.stripPrefix ?? ''
  if (prefix !== '' && (!prefix.startsWith('/') || prefix.endsWith('/'))) {
    throw new RangeError("stripPrefix must start with '/' and not end with '/'")
  }
  // key: the signature's key field — empty over MCP; over REST the Idempotency-Key header's value (or empty).
  return (
    method: string,
    headers: IncomingHttpHeaders,
    rawPath: string,
    body: Uint8Array,
    key = '',
  ): AdmissionResult => {
    let ok = true
    if (options.bearerToken !== undefined) {
      const auth = single(headers, 'authorization')
      const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined
      if (!sameSecret(token, options.bearerToken)) ok = false
    }
    for (const [name, value] of edge) if (!sameSecret(single(headers, name), value)) ok = false
    if (!ok) return { ok: false, reason: 'credentials' }
    const host = options.publicHost ?? single(headers, 'host') ?? ''
    const verdict = options.verifier.verify(
      { timestamp: single(headers, TIMESTAMP_HEADER), signature: single(headers, SIGNATURE_HEADER) },
      { method, host, path: prefix + rawPath, body, key },
    )
    return verdict.ok ? { ok: true } : { ok: false, reason: verdict.reason }
  }
}
