import { type KeyObject, randomUUID, type webcrypto } from 'node:crypto'
import { exportJWK, generateKeyPair, type JSONWebKeySet, SignJWT } from 'jose'
import type { KeySource, TokenAlgorithm } from './audience.js'

/** What to put in a minted token. The odd options exist only to make bad tokens for tests and proofs. */
export interface MintOptions {
  subject: string
  /** Space-separated into the `scope` claim; default none (the claim is still present, empty). */
  scopes?: readonly string[]
  /** `aud`: a string, a list (refused by the gate), or `null` to omit the claim. Default: the issuer's resource. */
  audience?: string | readonly string[] | null
  /** Lifetime in seconds (negative mints an already-expired token); default 900 (15 minutes). */
  lifetimeSeconds?: number
  /** Another `iss`, to test the issuer check. */
  issuer?: string
  /** Leave out `iat`, to test the required-claim check. */
  omitIssuedAt?: boolean
}

/** A token issuer whose private key lives only in this process's memory (never written anywhere). */
export interface InProcessIssuer {
  readonly issuer: string
  readonly algorithm: TokenAlgorithm
  readonly keyId: string
  /** Mints a signed JWT. */
  mint(options: MintOptions): Promise<string>
  /** The public half as a JWKS document (what a JWKS URL would serve). */
  jwks(): Promise<JSONWebKeySet>
  /** The key source to hand to createAudience. */
  keySource(): KeySource
}

/**
 * Creates an issuer with a fresh key: RSA 2048 / e=65537 for RS256 (the default) or P-256 for ES256. The key is
 * different on every call and is not extractable. `now` (epoch seconds) is injectable for tests.
 */
export async function createInProcessIssuer(options: {
  issuer: string
  resource: string
  algorithm?: TokenAlgorithm
  now?: () => number
  /**
   * A key pair to sign with instead of a fresh one (for an issuer that must re-mint after a restart of the
   * minting process, e.g. from a key file kept beside a tokens file). Default: a fresh, non-extractable pair.
   */
  keyPair?: { publicKey: webcrypto.CryptoKey | KeyObject; privateKey: webcrypto.CryptoKey | KeyObject }
  /** The `kid` header; default a random UUID's hex. */
  keyId?: string
}): Promise<InProcessIssuer> {
  const algorithm = options.algorithm ?? 'RS256'
  const { publicKey, privateKey } =
    options.keyPair ??
    (await generateKeyPair(
      algorithm,
      algorithm === 'RS256' ? { modulusLength: 2048, extractable: false } : { extractable: false },
    ))
  const keyId = options.keyId ?? randomUUID().replaceAll('-', '')
  const now = options.now ?? (() => Math.floor(Date.now() / 1000))
  return {
    issuer: options.issuer,
    algorithm,
    keyId,
    async mint(mint) {
      const iat = now()
      const claims: Record<string, unknown> = {
        scope: (mint.scopes ?? []).join(' '),
        jti: randomUUID().replaceAll('-', ''),
      }
      const audience = mint.audience === undefined ? options.resource : mint.audience
      if (audience !== null) claims.aud = typeof audience === 'string' ? audience : [...audience]
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: algorithm, typ: 'JWT', kid: keyId })
        .setIssuer(mint.issuer ?? options.issuer)
        .setSubject(mint.subject)
        .setExpirationTime(iat + (mint.lifetimeSeconds ?? 900))
      if (!mint.omitIssuedAt) jwt.setIssuedAt(iat)
      return jwt.sign(privateKey)
    },
    async jwks() {
      const jwk = await exportJWK(publicKey)
      return { keys: [{ ...jwk, kid: keyId, alg: algorithm, use: 'sig' }] }
    },
    keySource() {
      return { kind: 'key', publicKey }
    },
  }
}
