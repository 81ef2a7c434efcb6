// Signs a request as the platform does (seed 002, İmzalama), or breaks the signature on purpose when a conformance
// probe asks for a wrong or stale one.
import { type SignedRequest, signHeaders } from '@tollgate/signing'
import type { SignatureMode } from '../types.js'

export class RequestSigner {
  readonly #secret: string
  readonly #now: () => Date

  constructor(secret: string, now: () => Date) {
    this.#secret = secret
    this.#now = now
  }

  /** The X-SupportRoute-Timestamp and -Signature headers for the request, signed as `mode` asks. */
  sign(request: SignedRequest, mode: SignatureMode): Record<string, string> {
    const now = typeof mode === 'object' ? new Date(this.#now().getTime() - mode.staleSeconds * 1000) : this.#now()
    const signed = signHeaders(this.#secret, request, now)
    if (mode !== 'broken') return signed
    const out: Record<string, string> = {}
    for (const [name, value] of Object.entries(signed)) {
      // Flip the last hex digit: a well-formed signature that does not match.
      out[name] =
        name.toLowerCase() === 'x-supportroute-signature'
          ? value.slice(0, -1) + (value.endsWith('0') ? '1' : '0')
          : value
    }
    return out
  }
}
