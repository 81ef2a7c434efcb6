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
   * hold makes a fetch when one may start now (a key the issuer has just published is accepted on its first use once
   * the cooldown has passed), shares the fetch already running if there is one, and is otherwise refused at once as
   * any other bad token is: a flood of forged `kid`s costs the issuer at most one fetch per interval and holds no
   * request for the rest of it.
   */
  cooldownMs?: number
  /**
   * Keys are trusted for at most this many ms after the start of the fetch that read them; default 300 000. Past it,
   * the next token waits for a fresh fetch, so a key the issuer removed stops being accepted within this bound.
   */
  maxAgeMs?: number
  /**
   * Told after every fetch settles: `ok` with the number of keys read, or not `ok` with a short reason that names no
   * key and no body byte (`http-503`, `timeout`, `unreachable`, `not-json`, `too-large`). For reachability metrics.
   */
  onFetch?: (outcome: KeySetFetchOutcome) => void
}

/** One settled JWKS fetch, as {@link RemoteKeySetOptions.onFetch} reports it. */
export type KeySetFetchOutcome = { ok: true; keys: number } | { ok: false; reason: string }

/** A fetched key set: jose's local selector over it, and when its fetch started. */
interface Loaded {
  select: ReturnType<typeof createLocalJWKSet>
  startedAtMs: number
}

const JWKS_BYTES_LIMIT = 1_048_576

/**
 * The keys of a remote JWKS for verifying tokens, refetched when needed and never more often than allowed.
 *
 * - A token whose key is not in the set (an unknown `kid`) is judged against a fetch that started after the set it
 *   was checked against: the one running, or a new one when `cooldownMs` has passed since the last start. Inside the
 *   cooldown with no fetch running it is refused at once (jose's JWKSNoMatchingKey, the same refusal as a bad
 *   signature), never held for the rest of the cooldown. So a rotated-in key is accepted on its first use once a
 *   fetch may start, concurrent tokens share one fetch, and fetches start at least `cooldownMs` apart whatever the
 *   number of forged `kid`s presented.
 * - A set older than `maxAgeMs` is refetched before it is used again (or, should `maxAgeMs` be shorter than
 *   `cooldownMs`, as soon as the cooldown allows): a removed key stops verifying within max(maxAgeMs, cooldownMs).
 * - A fetch that fails is the server's fault (KeysUnavailable, answered 503); while a failed fetch is recent (within
 *   `cooldownMs`) and no trusted set is held, tokens are refused as unavailable at once instead of waiting.
 */
export class RemoteKeySet {
  readonly #url: URL
  readonly #timeoutMs: number
  readonly #cooldownMs: number
  readonly #maxAgeMs: number
  readonly #onFetch: ((outcome: KeySetFetchOutcome) => void) | undefined
  #current: Loaded | undefined
  #lastStartMs = Number.NEGATIVE_INFINITY
  #lastFailureMs = Number.NEGATIVE_INFINITY
  /** The fetch running now, if any (at most one at a time). */
  #running: Promise<Loaded> | undefined

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
    this.#onFetch = options.onFetch
  }

  /** Until when (epoch ms) the keys held now are trusted; 0 when none are held. Remembered admissions end by then. */
  trustedUntilMs(): number {
    return this.#current === undefined ? 0 : this.#current.startedAtMs + Math.max(this.#maxAgeMs, this.#cooldownMs)
  }

  /** jose's key resolver: the key the token's header names, fetched again when unknown or stale (if it may be). */
  readonly getKey = async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    const arrivedMs = Date.now()
    let held = this.#current
    if (held === undefined || arrivedMs >= held.startedAtMs + this.#maxAgeMs) {
      if (arrivedMs - this.#lastFailureMs < this.#cooldownMs && this.#lastFailureMs >= this.#lastStartMs)
        throw new KeysUnavailable()
      const fetching = this.#fetchIfAllowed(arrivedMs)
      if (fetching !== undefined) held = await fetching
      // Stale inside the cooldown (maxAgeMs shorter than cooldownMs): the held set serves until a fetch may start.
      if (held === undefined) throw new KeysUnavailable()
    }
    try {
      return await held.select(header, token)
    } catch (error) {
      // Only a key the set does not hold is worth a fetch; a bad alg or several matching keys are not, and neither
      // is a set fetched after the token arrived (it already had its fresh look).
      if (!(error instanceof joseErrors.JWKSNoMatchingKey) || held.startedAtMs >= arrivedMs) throw error
      const fetching = this.#fetchIfAllowed(Date.now(), held.startedAtMs)
      // Inside the cooldown with no fetch running: refused now, as any other bad token, never held for the rest of it.
      if (fetching === undefined) throw error
      return (await fetching).select(header, token)
    }
  }

  /**
   * The fetch running now when it started after `newerThanMs`, else a new fetch when the cooldown since the last
   * start has passed; undefined when neither (the caller refuses at once instead of waiting).
   */
  #fetchIfAllowed(nowMs: number, newerThanMs = Number.NEGATIVE_INFINITY): Promise<Loaded> | undefined {
    if (this.#running !== undefined && this.#lastStartMs > newerThanMs) return this.#running
    if (this.#running !== undefined || nowMs < this.#lastStartMs + this.#cooldownMs) return undefined
    this.#lastStartMs = nowMs
    const running = this.#fetch(nowMs).finally(() => {
      if (this.#running === running) this.#running = undefined
    })
    this.#running = running
    // Nobody may be waiting when a fetch fails (its waiters were answered); the failure is recorded, not thrown.
    running.catch(() => {})
    return running
  }

  async #fetch(startedAtMs: number): Promise<Loaded> {
    let loaded: Loaded
    let keys: number
    try {
      const set = await this.#read()
      loaded = { select: createLocalJWKSet(set), startedAtMs }
      keys = set.keys.length
    } catch (error) {
      this.#lastFailureMs = Date.now()
      this.#onFetch?.({ ok: false, reason: failureReason(error) })
      throw error instanceof KeysUnavailable
        ? error
        : new KeysUnavailable({ cause: error instanceof FetchFailure ? error.cause : error })
    }
    this.#onFetch?.({ ok: true, keys })
    // Fetches may finish out of order; the set from the newest start wins.
    if (this.#current === undefined || this.#current.startedAtMs <= startedAtMs) this.#current = loaded
    return loaded
  }

  async #read(): Promise<JSONWebKeySet> {
    let response: Response
    try {
      response = await fetch(this.#url, {
        signal: AbortSignal.timeout(this.#timeoutMs),
        redirect: 'error',
        headers: { accept: 'application/json' },
      })
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable'
      throw new FetchFailure(reason, error)
    }
    if (response.status !== 200) {
      await response.body?.cancel()
      throw new FetchFailure(`http-${response.status}`, new Error(`the JWKS answered HTTP ${response.status}`))
    }
    let text: string
    try {
      text = await response.text()
    } catch (error) {
      throw new FetchFailure((error as Error).name === 'TimeoutError' ? 'timeout' : 'unreachable', error)
    }
    if (Buffer.byteLength(text) > JWKS_BYTES_LIMIT)
      throw new FetchFailure('too-large', new Error('the JWKS is too large'))
    let set: unknown
    try {
      set = JSON.parse(text)
    } catch (error) {
      throw new FetchFailure('not-json', error)
    }
    if (typeof set !== 'object' || set === null || !Array.isArray((set as { keys?: unknown }).keys))
      throw new FetchFailure('not-a-key-set', new Error('the JWKS holds no keys array'))
    return set as JSONWebKeySet
  }
}

/** Why a fetch failed, as a short word for metrics; the cause is kept for the KeysUnavailable it becomes. */
class FetchFailure extends Error {
  readonly reason: string
  constructor(reason: string, cause: unknown) {
    super(`the JWKS could not be read (${reason})`, { cause })
    this.reason = reason
  }
}

function failureReason(error: unknown): string {
  return error instanceof FetchFailure ? error.reason : 'invalid'
}

function wholeMs(name: string, value: number | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < min)
    throw new RangeError(`${name} must be a whole number of ms, ${min} or more`)
  return value
}
