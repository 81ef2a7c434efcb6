// Self-verifying session ids: 16 random bytes and a MAC binding them to the owner, under a key every replica shares.
// A forged, altered or guessed id, or a real one presented by another caller, fails the MAC before any store lookup.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { EndpointConfigError } from './errors.js'

const RANDOM_BYTES = 16
const MAC_BYTES = 16
const ID_LENGTH = Math.ceil(((RANDOM_BYTES + MAC_BYTES) * 4) / 3) // base64url, no padding
const DOMAIN = 'tollgate-mcp-session-v1'

/** A stable, non-reversible name for an owner (a token sub, a bearer-token hash…), fit for a store column. */
export function ownerHash(owner: string): string {
  return createHash('sha256').update(owner).digest('base64url').slice(0, 32)
}

export class SessionIds {
  readonly #key: Buffer
  // The last owner's hash: a server's requests mostly come from one caller (the provider's platform), and the hash
  // is in every mint and verify.
  #lastOwner: string | undefined
  #lastOwnerHash = ''

  /** `key`: at least 32 bytes (or a string of ≥ 32 characters); shared by every replica. Random when omitted. */
  constructor(key?: Uint8Array | string) {
    const k = key === undefined ? randomBytes(32) : Buffer.from(key)
    if (k.length < 32) throw new EndpointConfigError('the session key must be at least 32 bytes')
    this.#key = k
  }

  #mac(random: Buffer, owner: string): Buffer {
    return createHmac('sha256', this.#key)
      .update(DOMAIN)
      .update(random)
      .update(this.#ownerHash(owner))
      .digest()
      .subarray(0, MAC_BYTES)
  }

  #ownerHash(owner: string): string {
    if (owner !== this.#lastOwner) {
      this.#lastOwnerHash = ownerHash(owner)
      this.#lastOwner = owner
    }
    return this.#lastOwnerHash
  }

  /** A new id for `owner`, and its store key (the random part). */
  mint(owner: string): { id: string; key: string } {
    const random = randomBytes(RANDOM_BYTES)
    const id = Buffer.concat([random, this.#mac(random, owner)]).toString('base64url')
    return { id, key: random.toString('base64url') }
  }

  /** The store key of `id` when it is genuine and belongs to `owner`; undefined otherwise. */
  verify(id: string, owner: string): string | undefined {
    if (id.length !== ID_LENGTH || !/^[A-Za-z0-9_-]+$/.test(id)) return undefined
    const raw = Buffer.from(id, 'base64url')
    // Canonical only: base64url's last character has spare bits, and an id must have exactly one spelling.
    if (raw.length !== RANDOM_BYTES + MAC_BYTES || raw.toString('base64url') !== id) return undefined
    const random = raw.subarray(0, RANDOM_BYTES)
    if (!timingSafeEqual(raw.subarray(RANDOM_BYTES), this.#mac(random, owner))) return undefined
    return random.toString('base64url')
  }
}
