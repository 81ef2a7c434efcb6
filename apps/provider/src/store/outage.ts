// Which store failures are outages (the database cannot be reached, is shutting down, is frozen, out of disk, or
// too contended to answer) and which are faults of this program. An outage is answered `unavailable` (503,
// Retry-After) — the same call with the same key may succeed once the database is back; anything else stays
// `internal_error`. Classified from what the drivers report (pg's SQLSTATE or its connection errors, Node's system
// error codes, better-sqlite3's SQLITE_* codes), never from a message that could quote a value.
import type { Logger } from 'pino'

/** What kind of outage: how long a caller is told to wait differs (Retry-After). */
export type OutageKind = 'contention' | 'unreachable' | 'disk'

/** An outage's facts for the log: the error's class and code only (a database error's message can quote row values). */
export interface StoreOutage {
  kind: OutageKind
  /** The error's class (`DatabaseError`, `SqliteError`, `Error`). */
  type: string
  /** SQLSTATE, SQLITE_* or Node's system error code; for pg's connection errors without one, a fixed name. */
  code: string
}

/**
 * What a store call did: `write` changed (or could have changed) the database, `read` only looked. A read ends an
 * outage like a write does, except a read-only one (READ_ONLY_SQLSTATE): reads still succeed there.
 */
export type StoreAccess = 'read' | 'write'

/**
 * SQLSTATE 25006 read_only_sql_transaction: the server (or this session) no longer takes writes — a demoted primary, or
 * a standby the address now leads to.
 */
export const READ_ONLY_SQLSTATE = '25006'

/** Seconds the caller is told to wait (Retry-After): a lock frees quickly, a restart takes seconds, a disk an operator. */
export const RETRY_AFTER_SECONDS: Readonly<Record<OutageKind, number>> = { contention: 1, unreachable: 2, disk: 5 }

// PostgreSQL SQLSTATEs. Class 08: connection exceptions. 53: insufficient resources (53100 disk full, 53200 out of
// memory, 53300 too many connections). 57P01/57P02/57P03: admin shutdown, crash shutdown, cannot connect now (starting
// up or recovering). 57014: a statement cancelled (an operator's statement_timeout). 25006: a read-only transaction (a
// standby after a failover). 58030: an I/O error. 40001/40P01/55P03: serialization failure, deadlock, lock not
// available — left after the store's retries (guard, postgres-batch.ts).
const PG_CONTENTION = new Set(['40001', '40P01', '55P03'])
const PG_UNREACHABLE = new Set(['57P01', '57P02', '57P03', '57014', '25006', '53200', '53300'])
const PG_DISK = new Set(['53100', '58030'])

// Node's system errors: a connection refused, reset or cut, a name or route that does not resolve now; a disk that is
// full, failing or read-only.
const NODE_UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
])
const NODE_DISK = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EROFS'])

// node-postgres's own connection errors carry no code: matched on their fixed texts (they quote nothing).
const PG_CONNECTION_MESSAGES: Readonly<Record<string, string>> = {
  'Connection terminated unexpectedly': 'PG_CONNECTION_TERMINATED',
  'Connection terminated due to connection timeout': 'PG_CONNECT_TIMEOUT',
  'timeout exceeded when trying to connect': 'PG_CONNECT_TIMEOUT',
  'timeout expired': 'PG_CONNECT_TIMEOUT',
  'Query read timeout': 'PG_QUERY_TIMEOUT',
  'Client has encountered a connection error and is not queryable': 'PG_CONNECTION_LOST',
}

function classify(error: unknown, depth: number): StoreOutage | undefined {
  if (depth > 4 || typeof error !== 'object' || error === null) return undefined
  const type = error instanceof Error ? error.constructor.name : 'Object'
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) {
      // SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_WRITE…: the extended codes share their primary code's prefix.
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return { kind: 'contention', type, code }
      if (code.startsWith('SQLITE_FULL') || code.startsWith('SQLITE_IOERR')) return { kind: 'disk', type, code }
      return undefined
    }
    if (/^[0-9A-Z]{5}$/.test(code)) {
      if (PG_CONTENTION.has(code)) return { kind: 'contention', type, code }
      if (code.startsWith('08') || PG_UNREACHABLE.has(code)) return { kind: 'unreachable', type, code }
      if (PG_DISK.has(code)) return { kind: 'disk', type, code }
      // Any other SQLSTATE (a constraint, a syntax error, a missing table) is this program's fault.
      if (!code.startsWith('E')) return undefined
    }
    if (NODE_UNREACHABLE.has(code)) return { kind: 'unreachable', type, code }
    // A Unix socket whose file is gone: the server is not running.
    if (code === 'ENOENT' && (error as { syscall?: unknown }).syscall === 'connect')
      return { kind: 'unreachable', type, code }
    if (NODE_DISK.has(code)) return { kind: 'disk', type, code }
  }
  if (error instanceof Error) {
    const named = PG_CONNECTION_MESSAGES[error.message]
    if (named !== undefined) return { kind: 'unreachable', type, code: named }
  }
  // Connecting to every address of a name failed (localhost → ::1 and 127.0.0.1): Node reports an AggregateError.
  if (error instanceof AggregateError) {
    for (const e of error.errors) {
      const found = classify(e, depth + 1)
      if (found !== undefined) return found
    }
  }
  return classify((error as { cause?: unknown }).cause, depth + 1)
}

/** The outage `error` (or its cause chain) reports, or undefined when it is a fault of this program. */
export function outageOf(error: unknown): StoreOutage | undefined {
  return classify(error, 0)
}

/**
 * One store's up/down state, so the log names an outage once, not once per request: a failing call that is an outage
 * marks the store down; a call that reaches the store again marks it up. Only a call that started in the current state
 * changes it (`since` is the `epoch` read when it started): a call in flight when PostgreSQL went down may still
 * succeed after the first failure, and one stuck in a frozen server may fail after the first success — neither may
 * make the log flap. The tool-call path announces the outage with its logger, once.
 */
export class StoreHealth {
  #down: StoreOutage | undefined
  #epoch = 0
  #announced = false
  #logger: Logger | undefined
  readonly #onDown: (() => void)[] = []

  /** Changes with every transition: read it when a call starts, hand it to failed() or succeeded() when it ends. */
  get epoch(): number {
    return this.#epoch
  }

  /** The outage in progress, or undefined when the store answers. */
  get outage(): StoreOutage | undefined {
    return this.#down
  }

  /** A store call that started at epoch `since` failed with this outage. */
  failed(outage: StoreOutage, since: number): void {
    if (this.#down !== undefined || since !== this.#epoch) return
    this.#down = outage
    this.#epoch++
    this.#announced = false
    for (const listener of this.#onDown) {
      try {
        listener()
      } catch {
        // A listener's fault must not turn the store call's answer into another error.
      }
    }
  }

  /** Calls `listener` at every transition to down (e.g. so a cached readiness answer is not served through it). */
  onDown(listener: () => void): void {
    this.#onDown.push(listener)
  }

  /**
   * A store call that started at epoch `since` succeeded: an outage that was announced ends with one line. A read
   * (`access`) does not end a read-only outage (SQLSTATE 25006): it proves nothing about writes, and ending the outage
   * with each read would begin another, logged again, with each refused write. Any other outage ends with any success.
   */
  succeeded(since: number, access: StoreAccess = 'write'): void {
    if (this.#down === undefined || since !== this.#epoch) return
    if (access === 'read' && this.#down.code === READ_ONLY_SQLSTATE) return
    const { type, code } = this.#down
    this.#down = undefined
    this.#epoch++
    if (this.#announced) this.#logger?.info({ store_error: { type, code } }, 'store available again')
    this.#announced = false
  }

  /** Logs `store unavailable` once per outage (the first caller that was answered unavailable). */
  announce(logger: Logger | undefined): void {
    if (logger === undefined) return
    this.#logger ??= logger
    if (this.#down === undefined || this.#announced) return
    this.#announced = true
    const { type, code } = this.#down
    logger.warn({ store_error: { type, code } }, 'store unavailable')
  }
}
