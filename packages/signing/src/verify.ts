import { timingSafeEqual } from 'node:crypto'
import { SigningError } from './errors.js'
import { type SignedRequest, signatureFor } from './sign.js'

export type SigningEnvironment = 'sandbox' | 'production'

const SANDBOX_PREFIX = 'srmps_'
const PRODUCTION_PREFIX = 'srmp_'

/** Which environment a secret belongs to by its prefix, or undefined for anything else. */
export function secretEnvironment(secret: string): SigningEnvironment | undefined {
  if (secret.startsWith(SANDBOX_PREFIX) && secret.length > SANDBOX_PREFIX.length) return 'sandbox'
  if (secret.startsWith(PRODUCTION_PREFIX) && secret.length > PRODUCTION_PREFIX.length) return 'production'
  return undefined
}

/**
 * `secret` is the position (1 or 2, in the order given) of the secret that verified the request, never the secret:
 * during a rotation it shows when the old one stops being used.
 */
export type VerifyResult =
  | { ok: true; secret: 1 | 2 }
  | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' }

export interface VerifierOptions {
  environment: SigningEnvironment
  /** One secret, or two while rotating. */
  secrets: readonly string[]
  /** Allowed clock skew either way, in seconds. Default 300 (±5 minutes). */
  toleranceSeconds?: number
  /** Clock in milliseconds; injectable for tests. */
  now?: () => number
}

const TIMESTAMP = /^[0-9]{1,12}$/
const SIGNATURE = /^v1=[0-9a-f]{64}$/

/**
 * Verifies merchant-provider/v1 request signatures over raw bytes. Every failure is one 401 to the caller;
 * `reason` exists for metrics only and must never be sent back.
 */
export class SignatureVerifier {
  readonly environment: SigningEnvironment
  #secrets: readonly string[]
  readonly #toleranceMs: number
  readonly #now: () => number

  constructor(options: VerifierOptions) {
    const { environment, secrets } = options
    checkSecrets(environment, secrets)
    const tolerance = options.toleranceSeconds ?? 300
    if (!Number.isInteger(tolerance) || tolerance < 0)
      throw new RangeError('toleranceSeconds must be a whole number ≥ 0')
    this.environment = environment
    this.#secrets = [...secrets]
    this.#toleranceMs = tolerance * 1000
    this.#now = options.now ?? Date.now
  }

  /**
   * Replaces the secrets at once (one, or two while rotating; same environment). Every verify() after the call uses
   * the new list, every one before it the old: nothing is verified against a mix. Throws SigningError as the
   * constructor does, keeping the old secrets.
   */
  setSecrets(secrets: readonly string[]): void {
    checkSecrets(this.environment, secrets)
    this.#secrets = [...secrets]
  }

  /** How many secrets verify now (1, or 2 while rotating). */
  get secretCount(): number {
    return this.#secrets.length
  }

  verify(headers: { timestamp: string | undefined; signature: string | undefined }, req: SignedRequest): VerifyResult {
    const { timestamp, signature } = headers
    if (timestamp === undefined || signature === undefined) return { ok: false, reason: 'missing' }
    if (!TIMESTAMP.test(timestamp) || !SIGNATURE.test(signature)) return { ok: false, reason: 'malformed' }
    if (Math.abs(this.#now() - Number(timestamp) * 1000) > this.#toleranceMs) return { ok: false, reason: 'stale' }
    const given = Buffer.from(signature, 'latin1')
    const secrets = this.#secrets // one list for the whole check, even if setSecrets runs meanwhile
    let matched: 1 | 2 | undefined
    // Compare against every secret (no early exit) so timing does not tell which one matched.
    for (let i = 0; i < secrets.length; i++) {
      const want = Buffer.from(signatureFor(secrets[i] as string, timestamp, req), 'latin1')
      if (want.length === given.length && timingSafeEqual(want, given)) matched ??= i === 0 ? 1 : 2
    }
    return matched !== undefined ? { ok: true, secret: matched } : { ok: false, reason: 'mismatch' }
  }
}

function checkSecrets(environment: SigningEnvironment, secrets: readonly string[]): void {
  if (secrets.length === 0) throw new SigningError('ERR_SIGNING_NO_SECRET', 'a signing secret is required')
  if (secrets.length > 2) {
    throw new SigningError('ERR_SIGNING_TOO_MANY_SECRETS', 'at most two secrets (the old and the new, while rotating)')
  }
  for (const secret of secrets) {
    // A production endpoint must refuse sandbox secrets, and the reverse keeps test keys out of production.
    if (secretEnvironment(secret) !== environment) {
      const want = environment === 'sandbox' ? SANDBOX_PREFIX : PRODUCTION_PREFIX
      throw new SigningError('ERR_SIGNING_SECRET_FORMAT', `a ${environment} signing secret must start with ${want}`)
    }
  }
}

/** The 401 body for any rejected signature: the REST error envelope. Fixed bytes; nothing from the request. */
export const CREDENTIALS_REJECTED_BODY =
  '{"error":{"code":"credentials_rejected","message":"the request signature was not accepted","retryable":false}}'
