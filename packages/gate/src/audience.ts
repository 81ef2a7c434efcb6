import type { KeyObject, webcrypto } from 'node:crypto'
import { type JWTPayload, type JWTVerifyGetKey, errors as joseErrors, jwtVerify } from 'jose'
import { GateConfigError, KeysUnavailable, TokenRefused } from './errors.js'
import { RemoteKeySet, type RemoteKeySetOptions } from './remote-key-set.js'

/** Where the audience check gets the issuer's public keys. */
export type KeySource =
  | { kind: 'key'; publicKey: webcrypto.CryptoKey | KeyObject }
  | ({ kind: 'jwks' } & RemoteKeySetOptions)
  | { kind: 'resolver'; getKey: JWTVerifyGetKey }

/** Signature algorithms a token may use. */
export type TokenAlgorithm = 'RS256' | 'ES256'

/** Options of {@link createAudience}. */
export interface AudienceOptions {
  /** This resource's identifier: the only `aud` accepted, and only as a single string. */
  resource: string
  /** The trusted issuer (`iss`), compared exactly. */
  issuer: string
  keys: KeySource
  /** Accepted algorithms; default `['RS256', 'ES256']`. `none` and HMAC are never accepted. */
  algorithms?: readonly TokenAlgorithm[]
  /** Clock for `exp` checks (tests inject one); default the wall clock. No leeway is applied. */
  now?: () => Date
  /**
   * Tokens admitted recently are remembered (exact token bytes) for at most `verifiedCacheMs` and re-checked only
   * for expiry, so a caller's every request does not queue an RSA verification on the crypto thread pool; default
   * 1024 tokens, 0 turns it off.
   */
  verifiedCacheSize?: number
  /**
   * How long an admitted token is remembered, ms; default 60 000. With a JWKS, never past the time its keys are
   * trusted (`maxAgeMs` after their fetch), so a key withdrawn from a JWKS stops admitting within `maxAgeMs`.
   */
  verifiedCacheMs?: number
}

/** What an accepted token says about its bearer. */
export interface Admission {
  /** The token's `sub`: the caller id budgets are keyed by. */
  subject: string
  /** The token's scopes (see {@link scopesOf}): `scope`, else `scp`; empty when neither. */
  scopes: string[]
  /** `exp`, epoch seconds. */
  expiresAt: number
  /** The single `aud` string (always equal to the configured resource). */
  resource: string
  /** The raw token, for the SDK's AuthInfo only; never logged. */
  token: string
}

/** Verifies bearer tokens for one resource. */
export interface Audience {
  readonly resource: string
  readonly issuer: string
  /**
   * Verifies an `Authorization` header value. Resolves with the admission, or rejects with TokenRefused
   * (caller's fault, answered 401) or KeysUnavailable (server's fault).
   */
  admit(authorizationHeader: string | undefined): Promise<Admission>
}

const REQUIRED_CLAIMS = ['aud', 'exp', 'iat', 'iss', 'sub'] as const

/**
 * Creates the audience check: signature by the trusted issuer's key with an allowed algorithm; `aud`, `exp`,
 * `iat`, `iss`, `sub` all present; `exp` in the future; `iss` exact; `aud` a single string equal to the resource
 * (a list is refused even when it names this resource, because such a token can be replayed at the other door).
 */
export function createAudience(options: AudienceOptions): Audience {
  const algorithms = [...(options.algorithms ?? ['RS256', 'ES256'])]
  if (algorithms.length === 0) throw new GateConfigError('at least one algorithm must be accepted')
  const keys = options.keys
  const keySet = keys.kind === 'jwks' ? new RemoteKeySet(keys) : undefined
  const getKey = keys.kind === 'jwks' ? (keySet as RemoteKeySet).getKey : keyResolver(keys)
  const now = options.now
  const cacheSize = options.verifiedCacheSize ?? 1024
  const cacheMs = options.verifiedCacheMs ?? 60_000
  if (!Number.isSafeInteger(cacheSize) || cacheSize < 0)
    throw new RangeError('verifiedCacheSize must be a whole number, 0 or more')
  if (!Number.isSafeInteger(cacheMs) || cacheMs < 0)
    throw new RangeError('verifiedCacheMs must be a whole number of ms')
  // untilMs on the audience's clock (expiry checks); keysUntilMs on the wall clock the key set fetches by.
  const admitted = new Map<string, { admission: Admission; untilMs: number; keysUntilMs: number }>()
  return {
    resource: options.resource,
    issuer: options.issuer,
    async admit(header) {
      const token = bearerToken(header)
      const nowMs = (now ? now() : new Date()).getTime()
      const known = admitted.get(token)
      if (known !== undefined) {
        admitted.delete(token)
        // The same rule as the verifier's: expired once exp <= now, in whole seconds, no leeway.
        if (known.admission.expiresAt <= Math.floor(nowMs / 1000)) {
          throw new TokenRefused('ERR_GATE_TOKEN_EXPIRED', 'the token has expired', 'JWTExpired')
        }
        if (nowMs < known.untilMs && Date.now() < known.keysUntilMs) {
          admitted.set(token, known)
          return known.admission
        }
      }
      const admission = await verify(token)
      if (cacheSize > 0) {
        const keysUntilMs = keySet === undefined ? Number.POSITIVE_INFINITY : keySet.trustedUntilMs()
        admitted.set(token, { admission, untilMs: nowMs + cacheMs, keysUntilMs })
        if (admitted.size > cacheSize) admitted.delete(admitted.keys().next().value as string)
      }
      return admission
    },
  }

  async function verify(token: string): Promise<Admission> {
    let payload: JWTPayload
    try {
      const verified = await jwtVerify(token, getKey as JWTVerifyGetKey, {
        algorithms,
        issuer: options.issuer,
        audience: options.resource,
        requiredClaims: [...REQUIRED_CLAIMS],
        ...(now ? { currentDate: now() } : {}),
      })
      payload = verified.payload
    } catch (error) {
      throw refusalFrom(error)
    }
    // Stage 2, the rule jose's membership test does not make: aud must be one string, not a list.
    if (typeof payload.aud !== 'string') {
      throw new TokenRefused('ERR_GATE_AUDIENCE_LIST', 'audience is not a single resource')
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') {
      throw new TokenRefused('ERR_GATE_CLAIM_MISSING', 'a required claim is missing or empty')
    }
    return {
      subject: payload.sub,
      scopes: scopesOf(payload),
      expiresAt: payload.exp as number,
      resource: payload.aud,
      token,
    }
  }
}

/**
 * The scopes a token grants. `scope` (RFC 9068 §2.2.3, RFC 8693 §4.2: one space-separated string) is read first;
 * a token without it is read from `scp`, where Okta puts an array of strings and Microsoft Entra ID a
 * space-separated string. Either claim may be either form.
 *
 * When both are present, `scope` alone counts: it is the standard claim, and the two can disagree (an issuer mapping
 * one claim from a policy and the other from a default). Their union would grant a tool the standard claim withholds,
 * and an intersection would punish a correct `scope` for a stale `scp`; choosing one, always the same one, lets the
 * operator reason from the issuer's documented claim. A claim that is present but neither a string nor an array of
 * strings grants nothing (no fallback to the other claim: a malformed standard claim is not a reason to read more).
 */
export function scopesOf(payload: JWTPayload): string[] {
  const claim = payload.scope !== undefined ? payload.scope : (payload as { scp?: unknown }).scp
  if (typeof claim === 'string') return [...new Set(claim.split(/\s+/).filter((s) => s !== ''))]
  if (Array.isArray(claim) && claim.every((s): s is string => typeof s === 'string'))
    return [...new Set(claim.flatMap((s) => s.split(/\s+/)).filter((s) => s !== ''))]
  return []
}

function bearerToken(header: string | undefined): string {
  if (header === undefined) throw new TokenRefused('ERR_GATE_TOKEN_MISSING', 'no bearer token was presented')
  const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim())
  if (match === null) throw new TokenRefused('ERR_GATE_TOKEN_INVALID', 'the authorization header is not a bearer token')
  return match[1] as string
}

function keyResolver(keys: Exclude<KeySource, { kind: 'jwks' }>): JWTVerifyGetKey | webcrypto.CryptoKey | KeyObject {
  return keys.kind === 'key' ? keys.publicKey : keys.getKey
}

function refusalFrom(error: unknown): Error {
  if (error instanceof KeysUnavailable) return error
  if (error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid)
    return new KeysUnavailable({ cause: error })
  if (!(error instanceof joseErrors.JOSEError)) {
    // A failed JWKS fetch surfaces as a plain error (network) — the server's fault, not the caller's.
    return new KeysUnavailable({ cause: error })
  }
  const name = error.constructor.name
  if (error instanceof joseErrors.JWTExpired)
    return new TokenRefused('ERR_GATE_TOKEN_EXPIRED', 'the token has expired', name)
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.reason === 'missing')
      return new TokenRefused('ERR_GATE_CLAIM_MISSING', 'a required claim is missing or empty', name)
    if (error.claim === 'iss')
      return new TokenRefused('ERR_GATE_ISSUER', 'the token was not issued by the trusted issuer', name)
    if (error.claim === 'aud')
      return new TokenRefused('ERR_GATE_AUDIENCE', 'the token was not minted for this resource', name)
    return new TokenRefused('ERR_GATE_TOKEN_INVALID', 'a claim failed validation', name)
  }
  return new TokenRefused('ERR_GATE_TOKEN_INVALID', 'the token is malformed or its signature does not verify', name)
}
