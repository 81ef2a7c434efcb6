// Where 2025-era sessions are recorded, so that any replica can tell an open session from a closed or idle one.
// The record is keyed by the session's random part and carries a hash of its owner, never a token.

/** Limits applied when a session opens. */
export interface SessionCaps {
  /** A session unseen this long is expired. */
  idleMs: number
  /** At most this many open sessions; opening one more is refused. */
  maxSessions: number
  /** At most this many per owner; opening one more closes that owner's least recently seen. */
  maxPerOwner: number
}

/**
 * The shared record of open sessions. Implementations: {@link MemorySessionStore} (one process), a Redis store in
 * `@tollgate/gate`, a PostgreSQL store in the provider. Every method may throw; the endpoint answers 503 then.
 */
export interface SessionStore {
  /** Records a new session seen at `nowMs`; false (nothing recorded) when `maxSessions` live ones are open. */
  open(key: string, owner: string, nowMs: number, caps: SessionCaps): Promise<boolean>
  /**
   * true when the session is open and was seen within `idleMs`; marks it seen at `nowMs`. A store may skip that write
   * when it recorded the session a small fraction of `idleMs` ago (PgSessionStore: 1/64): the session may then expire
   * up to that much early, never late.
   */
  touch(key: string, nowMs: number, idleMs: number): Promise<boolean>
  /** Closes the session; true when it was open (and not idle-expired). */
  close(key: string, nowMs: number, idleMs: number): Promise<boolean>
  /** How many sessions are open and were seen within `idleMs` (for a metrics gauge; optional). */
  countOpen?(nowMs: number, idleMs: number): Promise<number>
  /** Releases the store's own resources (not the shared data). */
  dispose?(): Promise<void>
}

interface MemoryRecord {
  owner: string
  lastSeenMs: number
}

/** The single-process default: a Map, swept of idle sessions as it is used. */
export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, MemoryRecord>()

  get size(): number {
    return this.#sessions.size
  }

  async open(key: string, owner: string, nowMs: number, caps: SessionCaps): Promise<boolean> {
    // An owner can hold maxPerOwner sessions only when the map holds that many: below that, no scan of every session
    // on every open (with the default uncapped owner, never).
    const own = this.#sessions.size >= caps.maxPerOwner ? [...this.#sessions].filter(([, r]) => r.owner === owner) : []
    if (own.length >= caps.maxPerOwner) {
      own.sort((a, b) => a[1].lastSeenMs - b[1].lastSeenMs)
      for (const [k] of own.slice(0, own.length - caps.maxPerOwner + 1)) this.#sessions.delete(k)
    }
    if (this.#sessions.size >= caps.maxSessions) this.#sweep(nowMs - caps.idleMs)
    if (this.#sessions.size >= caps.maxSessions) return false
    this.#sessions.set(key, { owner, lastSeenMs: nowMs })
    return true
  }

  async touch(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    const r = this.#sessions.get(key)
    if (r === undefined) return false
    if (r.lastSeenMs <= nowMs - idleMs) {
      this.#sessions.delete(key)
      return false
    }
    r.lastSeenMs = nowMs
    return true
  }

  async close(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    const r = this.#sessions.get(key)
    if (r === undefined) return false
    this.#sessions.delete(key)
    return r.lastSeenMs > nowMs - idleMs
  }

  async countOpen(nowMs: number, idleMs: number): Promise<number> {
    let n = 0
    for (const r of this.#sessions.values()) if (r.lastSeenMs > nowMs - idleMs) n++
    return n
  }

  #sweep(cutoff: number): void {
    for (const [k, r] of this.#sessions) if (r.lastSeenMs <= cutoff) this.#sessions.delete(k)
  }
}
