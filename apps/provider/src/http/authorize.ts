// Request admission for the provider's door: bearer token and edge headers on the headers alone (before any body
// byte is read), then the HMAC signature over the exact raw bytes (with the public host and the full signed path).
// Also used by other routes on the same port (REST), which is why the two stages are separate functions.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { Admission, AdmissionRequest } from '@tollgate/mcp-endpoint'
import {
  CREDENTIALS_REJECTED_BODY,
  SIGNATURE_HEADER,
  type SignatureVerifier,
  type SigningEnvironment,
  TIMESTAMP_HEADER,
} from '@tollgate/signing'

export interface AdmissionOptions {
  verifier: SignatureVerifier
  environment: SigningEnvironment
  /** Host the platform signs (your public host name); default: the request's Host header. */
  publicHost?: string
  /** Prefix a reverse proxy strips before forwarding (e.g. '/billing'); the signature covers it. */
  stripPrefix?: string
  bearerToken?: string
  /** Header name → exact value that every request must carry (e.g. a CDN's shared secret). */
  edgeHeaders?: Record<string, string>
  /** Told the position (1 or 2) of the secret that verified each admitted request (metrics). */
  onVerified?: (position: 1 | 2) => void
}

export interface ProviderAdmission {
  /** Bearer token and edge headers; runs before the body is read. */
  admitHeaders(req: IncomingMessage): Admission
  /**
   * The signature over the raw bytes. `key` is the signature's key field: empty over MCP (the door never passes
   * one); over REST the Idempotency-Key header's value, or empty when there is none.
   */
  admitBody(request: AdmissionRequest & { key?: string }): Admission
}

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

const rejected = (reason: string): Admission => ({ ok: false, status: 401, body: CREDENTIALS_REJECTED_BODY, reason })

export function createAdmission(options: AdmissionOptions): ProviderAdmission {
  const edge = Object.entries(options.edgeHeaders ?? {}).map(([k, v]) => [k.toLowerCase(), v] as const)
  const prefix = options.stripPrefix ?? ''
  if (prefix !== '' && (!prefix.startsWith('/') || prefix.endsWith('/'))) {
    throw new RangeError("stripPrefix must start with '/' and not end with '/'")
  }
  // Sessions are bound to the credentials admitted: the bearer token (as a hash) when one is configured, else
  // the signing tenant (the secrets' environment: one platform signs every request).
  const caller =
    options.bearerToken !== undefined
      ? `bearer:${createHash('sha256').update(options.bearerToken).digest('base64url')}`
      : `signed:${options.environment}`
  const admitted: Admission = { ok: true, caller }
  return {
    admitHeaders(req) {
      let ok = true
      if (options.bearerToken !== undefined) {
        const auth = single(req.headers, 'authorization')
        const token = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined
        if (!sameSecret(token, options.bearerToken)) ok = false
      }
      for (const [name, value] of edge) if (!sameSecret(single(req.headers, name), value)) ok = false
      return ok ? admitted : rejected('credentials')
    },
    admitBody({ method, headers, rawPath, body, key }) {
      const host = options.publicHost ?? single(headers, 'host') ?? ''
      const verdict = options.verifier.verify(
        { timestamp: single(headers, TIMESTAMP_HEADER), signature: single(headers, SIGNATURE_HEADER) },
        { method, host, path: prefix + rawPath, body, key: key ?? '' },
      )
      if (!verdict.ok) return rejected(verdict.reason)
      options.onVerified?.(verdict.secret)
      return admitted
    },
  }
}
