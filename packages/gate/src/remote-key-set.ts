import {
  createLocalJWKSet,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  errors as joseErrors,
} from 'jose'
import { GateConfigError, KeysUnavailable } from './errors.js'

/** Options of {@link RemoteKeySet}. */
export interface RemoteKeySetOptions {
  /** The issuer's JWKS address (http or https). */
  url: string | URL
  /** One fetch, headers and body, must finish within this many ms; default 5000. */
  timeoutMs?: number
  /**
   * At least this many ms between the starts of two fetches; default 5000. A token naming a key the set does not
   * hold waits for the next fetch allowed by this (shared by every such token), so a flood of forged `kid`s costs
   * the issuer at most one fetch per interval, and a key the issuer has just published is still accepted on first use.
   */
  cooldownMs?: number
  /**
   * Keys are trusted for at most this many ms after the start of the fetch that read them; default 300 000. Past it,
   * the next token waits for a fresh fetch, so a key the issuer removed stops being accepted within this bound.
   */
  maxAgeMs?: number
}

/** A fetched key set: jose's local selector over it, and when its fetch started. */
interface Loaded {
  select: ReturnType<typeof createLocalJWKSet>
  startedAtMs: number
}

/** A fetch that has been asked for: started at `startAtMs` (or scheduled to), settled by `done`. */
interface Fetch {
  startAtMs: number
  done: Promise<Loaded>
}

const JWKS_BYTES_LIMIT = 1_048_576

/**
 * The keys of a remote JWKS for verifying tokens, refetched when needed and never more often than allowed.
 *
 * - A token whose key is not in the set (an unknown `kid`) waits for a fetch that started after the token arrived,
 *   then is judged against it: a rotated-in key is accepted on its first use. Concurrent waiters share one fetch,
 *   and fetches start at least `cooldownMs` apart, whatever the number of forged `kid`s presented.
 * - A set older than `maxAgeMs` is refetched before it is used again: a removed key stops verifying within that bound.
 * - A fetch that fails is the server's fault (KeysUnavailable, answered 503); while a failed fetch is recent (within
 *   `cooldownMs`) and no trusted set is held, tokens are refused as unavailable at once instead of waiting.
 */
export class RemoteKeySet {
  readonly #url: URL
  readonly #timeoutMs: number
  readonly #cooldownMs: number
  readonly #maxAgeMs: number
  #current: Loaded | undefined
  #lastStartMs = Number.NEGATIVE_INFINITY
  #lastFailureMs = Number.NEGATIVE_INFINITY
  /** The newest fetch asked for (started or scheduled). */
  #latest: Fetch | undefined

  constructor(options: RemoteKeySetOptions) {
    let url: URL
    try {
      url = new URL(options.url)
    } catch {
      throw new GateConfigError('the JWKS address must be an absolute http(s) URL')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new GateConfigError('the JWKS address must be an absolute http(s) URL')
    this.#url = url
    this.#timeoutMs = wholeMs('timeoutMs', options.timeoutMs, 5000, 1)
    this.#cooldownMs = wholeMs('cooldownMs', options.cooldownMs, 5000, 0)
    this.#maxAgeMs = wholeMs('maxAgeMs', options.maxAgeMs, 300_000, 1)
  }

  /** Until when (epoch ms) the keys held now are trusted; 0 when none are held. Remembered admissions end by then. */
  trustedUntilMs(): number {
    return this.#current === undefined ? 0 : this.#current.startedAtMs + this.#maxAgeMs
  }

  /** jose's key resolver: the key the token's header names, fetched again when unknown or stale. */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    const arrivedMs = Date.now()
    let held = this.#current
    if (held === undefined || arrivedMs >= held.startedAtMs + this.#maxAgeMs) {
      if (arrivedMs - this.#lastFailureMs < this.#cooldownMs && this.#lastFailureMs >= this.#lastStartMs)
        throw new KeysUnavailable()
      held = await this.#fetchStartedAfter(arrivedMs)
    }
    try {
      return await held.select(header, token)
    } catch (error) {
      // Only a key the set does not hold is worth a fetch; a bad alg or several matching keys are not.
      if (!(error instanceof joseErrors.JWKSNoMatchingKey) || held.startedAtMs >= arrivedMs) throw error
    }
    return (await this.#fetchStartedAfter(arrivedMs)).select(header, token)
  }

  /** A fetch that starts no earlier than `notBeforeMs`: the newest one asked for when it qualifies, else a new one. */
  #fetchStartedAfter(notBeforeMs: number): Promise<Loaded> {
    const latest = this.#latest
    if (latest !== undefined && latest.startAtMs >= notBeforeMs) return latest.done
    const nowMs = Date.now()
    const startAtMs = Math.max(nowMs, this.#lastStartMs + this.#cooldownMs)
    this.#lastStartMs = startAtMs
    const done = new Promise<void>((resolve) => {
      if (startAtMs <= nowMs) resolve()
      else setTimeout(resolve, startAtMs - nowMs)
    }).then(() => this.#fetch(startAtMs))
    this.#latest = { startAtMs, done }
    // Nobody may be waiting when a fetch fails (its waiters were answered); the failure is recorded, not thrown.
    done.catch(() => {})
    return done
  }

  async #fetch(startedAtMs: number): Promise<Loaded> {
    let loaded: Loaded
    try {
      loaded = { select: createLocalJWKSet(await this.#read()), startedAtMs }
    } catch (error) {
      this.#lastFailureMs = Date.now()
      throw error instanceof KeysUnavailable ? error : new KeysUnavailable({ cause: error })
    }
    // Fetches may finish out of order; the set from the newest start wins.
    if (this.#current === undefined || this.#current.startedAtMs <= startedAtMs) this.#current = loaded
    return loaded
  }

  async #read(): Promise<JSONWebKeySet> {
    const response = await fetch(this.#url, {
      signal: AbortSignal.timeout(this.#timeoutMs),
      redirect: 'error',
      headers: { accept: 'application/json' },
    })
    if (response.status !== 200) {
      await response.body?.cancel()
      throw new KeysUnavailable({ cause: new Error(`the JWKS answered HTTP ${response.status}`) })
    }
    const text = await response.text()
    if (Buffer.byteLength(text) > JWKS_BYTES_LIMIT)
      throw new KeysUnavailable({ cause: new Error('the JWKS is too large') })
    return JSON.parse(text) as JSONWebKeySet
  }
}

function wholeMs(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be a whole number of ms, ${min} or more`)
  return value
}
