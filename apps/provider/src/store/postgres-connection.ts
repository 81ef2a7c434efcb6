// The PostgreSQL pool shared by the keys store and the demo ledger's store: options, error wrapping, transactions
// and schema DDL.
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { parseIntoClientConfig } from 'pg-connection-string'
import { StoreError } from '../errors.js'
import { outageOf, READ_ONLY_SQLSTATE, type StoreAccess, StoreHealth } from './outage.js'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface PostgresStoreOptions {
  connectionString: string
  /** Schema holding the tables (created if absent); default 'tollgate_provider'. [a-z_][a-z0-9_]*. */
  schema?: string
  /** Pool size; default 10 (plus 4 connections for claims and ledger writes, see unflushedPool). */
  maxConnections?: number
  /**
   * How long to wait for a connection to the server (or a free pooled one); default the connection string's
   * `connect_timeout` (seconds, as libpq reads it), else 10 000 ms.
   */
  connectTimeoutMs?: number
  /**
   * How long a statement's answer may take before the call fails as an outage (a frozen or unreachable server), the
   * connection being dropped; default the connection string's `query_timeout` (ms, as node-postgres reads it), else
   * 5 000 ms. Schema changes at open are not bounded by it.
   */
  queryTimeoutMs?: number
}

/** What a store's statements need: the pools, its schema, and error wrapping. */
export interface PostgresConnection {
  /**
   * The pool of the moment: read it for each statement, never keep it — both pools are replaced when the server
   * turns out read-only (see recycle).
   */
  readonly pool: pg.Pool
  /**
   * A small pool (see unflushedPoolSettings) whose commits do not wait for the WAL flush (synchronous_commit=off):
   * for claims and the demo ledger's optimistic writes only, never for a write that is answered on without a later
   * synchronous commit. See unflushedPoolSettings for why that is safe.
   */
  readonly unflushedPool: pg.Pool
  schema: string
  /**
   * Runs fn; any failure becomes a StoreError (the cause kept for logs, never in the message). A serialization
   * failure or deadlock (nothing committed) runs fn again, twice at most. `access` says whether fn's success proves
   * the server takes writes (StoreHealth.succeeded: a read does not end a read-only outage): 'write' unless said
   * otherwise — only a call marked 'read' (or whose result says it only read) is exempt.
   */
  guard<T>(fn: () => Promise<T>, access?: StoreAccess | ((out: T) => StoreAccess)): Promise<T>
  /** Up or down, from the last statement's result (the once-per-outage log line). */
  health: StoreHealth
  /** BEGIN … COMMIT on one pooled client (ROLLBACK on failure). */
  transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T>
  /**
   * Replaces both pools with new ones (the old ones end once their connections are returned): no statement runs again
   * on a connection opened before. Done when a statement finds the server read-only (SQLSTATE 25006): a demoted
   * primary, or a standby the address now leads to. Its connections would otherwise keep answering reads from a
   * server that no longer takes writes — and a write fails on each once before the pool drops it.
   */
  recycle(): void
  /** How many times the pools were replaced (tests, logs). */
  readonly recycled: number
  /** Closes both pools. */
  end(): Promise<void>
}

/**
 * A connection a statement failed on is not pooled again unless the server refused the statement on its merits (a
 * constraint, a deadlock or serialization failure): a cut or timed-out connection, or one to a server that is
 * shutting down, read-only or out of disk, is dropped.
 */
const dropsConnection = (e: unknown) =>
  !(e instanceof pg.DatabaseError) || (outageOf(e) ?? { kind: 'contention' }).kind !== 'contention'

/** Pools are replaced at most this often: a burst of read-only failures (every pooled connection) replaces them once. */
const RECYCLE_INTERVAL_MS = 1_000

/**
 * Session settings of both pools. Every statement they run is a probe by primary key or unique key, or a range on
 * an index (purge: operations(created_at); a charge's refunds: refunds(transaction_ref); a kind of ledger documents:
 * the primary key's prefix). Without enable_seqscan=off the planner, on tables not yet analyzed (a new schema, or
 * rows added since autovacuum last ran), costs a sequential scan below an index probe; a named statement's generic
 * plan, made after its fifth run, then stays for the connection's life, and every claim, ledger write and finish
 * batch read the whole table (measured on the bench's refund load: ~900 rows read per refund after 8 s, growing with
 * the table; PostgreSQL's CPU 549 µs per refund without the setting, 333 µs with it, in single 8 s runs). Custom
 * plans each time (plan_cache_mode=force_custom_plan) avoid the scans too, but replanning cost more (468 µs).
 * jit=off: a plan that must scan (a catalog query in the schema DDL) carries the disabled scan's cost, far above
 * jit_above_cost, and compiling it would cost more than running it.
 */
const SESSION_OPTIONS = '-c enable_seqscan=off -c jit=off'

/**
 * Why a claim and a ledger write need not wait for their own WAL flush. PostgreSQL's WAL is one sequence, a commit
 * record is written to it before the transaction becomes visible, and a synchronous commit returns only once the WAL
 * up to its own commit record is on disk — so it flushes every commit that preceded it, including every commit whose
 * effects it read. A refund answers its caller only after the finish (outcome + refund record), a synchronous commit
 * issued after the claim and the ledger write returned: when the answer leaves, all three are on disk. A crash loses a
 * suffix of the WAL, so what survives is a prefix of claim → ledger write → finish, and each prefix is one the
 * recovery path already handles: nothing (a retry starts afresh); the claim alone (in_progress until its lease ends,
 * then a takeover asks billing.lookup(key), finds nothing and refunds once); claim + ledger write (the takeover finds
 * the ledger's outcome and records it, without refunding again); all three (replayed).
 *
 * What another caller can observe before the flush: a claim answers only a caller of the same key, and only
 * in_progress. A ledger write is read by later mutations of the same charge (another refund's limit check, on any
 * replica) — but their answers too wait for their own synchronous finish, which comes later in the WAL and so flushes
 * the write they read. Only pure reads (sr_get_transaction, a dry run's checks, the REST reads) can show a refund for
 * the short time (≤ 3 × wal_writer_delay, 600 ms by default) before it is on disk; if PostgreSQL loses power then, the
 * refund vanishes, its call had not been answered, and a retry with the same key refunds exactly once. Nothing answered as done is lost, nothing is doubled. One flush per refund
 * (the finish's) instead of three; the finish and everything else keep synchronous_commit as the server has it.
 */
const unflushedPoolSettings = { max: 4, options: `${SESSION_OPTIONS} -c synchronous_commit=off` } as const

/**
 * Batches of one kind (claims, ledger reads, ledger writes, finishes) in flight at once (postgres-batch.ts
 * maxInFlight). 2 × 2 kinds fill the unflushed pool (claims, ledger writes); the main pool has room for its 2 × 2.
 */
export const BATCHES_IN_FLIGHT = 2

/**
 * A parsed connection string whose `options` are the string's own (an operator's `?options=-c …`), then ours (a later
 * -c wins for the same setting). Handed to pg as a connectionString, the string's `options` would replace the pool's
 * instead (pg merges the parsed string over the config), silently dropping enable_seqscan=off and the unflushed
 * pool's synchronous_commit=off.
 */
function withSessionOptions(parsed: pg.ClientConfig, ours: string): pg.ClientConfig {
  return { ...parsed, options: parsed.options ? `${parsed.options} ${ours}` : ours }
}

/** A connection string as a client config; RangeError (that does not carry the string) when it does not parse. */
export function clientConfigOf(connectionString: string): pg.ClientConfig {
  try {
    return parseIntoClientConfig(connectionString)
  } catch {
    // The parser's error carries the whole string (its input), password included: not passed on.
    throw new RangeError('connectionString is not a valid postgres:// URL')
  }
}

/** The store's two pools over one server (nothing connects yet); an idle client's error never crashes the process. */
function openPools(parsed: pg.ClientConfig, max: number, connectTimeoutMs: number, queryTimeoutMs: number) {
  const pool = new pg.Pool({
    ...withSessionOptions(parsed, SESSION_OPTIONS),
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    query_timeout: queryTimeoutMs,
  })
  const unflushedPool = new pg.Pool({
    ...withSessionOptions(parsed, unflushedPoolSettings.options),
    max: unflushedPoolSettings.max,
    connectionTimeoutMillis: connectTimeoutMs,
    query_timeout: queryTimeoutMs,
  })
  // An idle client error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => {})
  unflushedPool.on('error', () => {})
  return { pool, unflushedPool }
}

/** A pool for options (nothing connects yet). RangeError for bad options. */
export function connectPostgres(options: PostgresStoreOptions): PostgresConnection {
  const schema = options.schema ?? 'tollgate_provider'
  if (!SCHEMA_NAME.test(schema)) throw new RangeError('schema must match [a-z_][a-z0-9_]{0,62}')
  const max = options.maxConnections ?? 10
  if (!Number.isInteger(max) || max < 1) throw new RangeError('maxConnections must be a whole number ≥ 1')
  const parsed = clientConfigOf(options.connectionString)
  const { connectTimeoutMs, queryTimeoutMs } = postgresTimeouts(options, parsed)
  const makePools = () => openPools(parsed, max, connectTimeoutMs, queryTimeoutMs)
  let pools = makePools()
  const retired = new Set<Promise<void>>()
  let recycled = 0
  let lastRecycleAt = Number.NEGATIVE_INFINITY
  let ended = false
  const recycle = () => {
    const now = performance.now()
    if (ended || now - lastRecycleAt < RECYCLE_INTERVAL_MS) return
    lastRecycleAt = now
    recycled++
    const old = pools
    pools = makePools()
    // end() waits for the connections in use to be returned (their statements finish or fail as they would).
    const ending = Promise.all([old.pool.end(), old.unflushedPool.end()]).then(
      () => {},
      () => {},
    )
    retired.add(ending)
    void ending.then(() => retired.delete(ending))
  }
  const health = new StoreHealth()
  const guard = async <T>(
    fn: () => Promise<T>,
    access: StoreAccess | ((out: T) => StoreAccess) = 'write',
  ): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      const since = health.epoch
      try {
        const out = await fn()
        health.succeeded(since, typeof access === 'function' ? access(out) : access)
        return out
      } catch (cause) {
        if (cause instanceof StoreError) throw cause
        if (outageOf(cause)?.code === READ_ONLY_SQLSTATE) recycle()
        // A serialization failure or deadlock rolled the statement (or transaction) back: running it again is safe,
        // and usually succeeds once the other transaction is through. Left after the retries, it is an outage.
        if (attempt < 3 && isRetryableConflict(cause)) {
          await sleep(attempt * (5 + Math.random() * 20))
          continue
        }
        throw new StoreError('PostgreSQL store operation failed', { cause, health }).reported(since)
      }
    }
  }
  const transaction = <T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> =>
    guard(async () => {
      const c = await pools.pool.connect()
      let failed: unknown
      try {
        await c.query('BEGIN')
        const out = await fn(c)
        await c.query('COMMIT')
        return out
      } catch (e) {
        failed = e
        await c.query('ROLLBACK').catch(() => {})
        throw e
      } finally {
        // A connection a statement failed on may be cut or mid-answer (a query timeout), or lead to a server that is
        // shutting down or read-only: dropped, not pooled again. After a refused statement (a constraint, a deadlock)
        // the ROLLBACK left it clean and it is kept.
        c.release(failed !== undefined && dropsConnection(failed) ? (failed as Error) : undefined)
      }
    })
  const end = async () => {
    ended = true
    await Promise.all([pools.pool.end(), pools.unflushedPool.end(), ...retired])
  }
  return {
    get pool() {
      return pools.pool
    },
    get unflushedPool() {
      return pools.unflushedPool
    },
    schema,
    guard,
    health,
    transaction,
    recycle,
    get recycled() {
      return recycled
    },
    end,
  }
}

const isRetryableConflict = (e: unknown) => e instanceof pg.DatabaseError && (e.code === '40001' || e.code === '40P01')

/**
 * The pools' timeouts: the options, else the connection string's (libpq's `connect_timeout` in seconds, node-postgres's
 * `query_timeout` in ms), else 10 s to connect and 5 s per statement. RangeError for a value that is not a whole number
 * ≥ 1 (never quoting the string).
 */
export function postgresTimeouts(
  options: Pick<PostgresStoreOptions, 'connectTimeoutMs' | 'queryTimeoutMs'>,
  parsed: pg.ClientConfig & { connect_timeout?: unknown },
): { connectTimeoutMs: number; queryTimeoutMs: number } {
  const fromString = (v: unknown, scale: number) =>
    v === undefined || v === null || v === '' ? undefined : Number(v) * scale
  const connectTimeoutMs = options.connectTimeoutMs ?? fromString(parsed.connect_timeout, 1000) ?? 10_000
  if (!Number.isInteger(connectTimeoutMs) || connectTimeoutMs < 1)
    throw new RangeError('connectTimeoutMs (or connect_timeout) must be a whole number ≥ 1')
  const queryTimeoutMs = options.queryTimeoutMs ?? fromString(parsed.query_timeout, 1) ?? 5_000
  if (!Number.isInteger(queryTimeoutMs) || queryTimeoutMs < 1)
    throw new RangeError('queryTimeoutMs (or query_timeout) must be a whole number ≥ 1')
  return { connectTimeoutMs, queryTimeoutMs }
}

/**
 * The one advisory lock every DDL of a schema takes (keys, demo ledger, 2025-era sessions): replicas starting at once
 * race on CREATE … IF NOT EXISTS otherwise, and two different locks around overlapping DDL can deadlock (40P01).
 */
export const schemaDdlLockKey = (schema: string) => `tollgate_provider_ddl:${schema}`

/** Runs DDL under the schema's DDL lock. */
export function runSchemaDdl(c: PostgresConnection, ddl: string): Promise<void> {
  return c.transaction(async (client) => {
    // Waiting for another replica's DDL and migrating a large table can take longer than a call's query timeout.
    await client.query(ddlQuery('SELECT pg_advisory_xact_lock(hashtext($1))', [schemaDdlLockKey(c.schema)]))
    await client.query(ddlQuery(ddl))
  })
}

/**
 * Schema changes at open and the hourly purge (a first purge may delete a large backlog): bounded, so a frozen server
 * does not hang them forever, but far above a call's query timeout.
 */
export const LONG_STATEMENT_TIMEOUT_MS = 15 * 60_000

// node-postgres reads a per-query query_timeout (client.js), which @types/pg's QueryConfig does not list.
export const longQuery = (config: pg.QueryConfig): pg.QueryConfig =>
  ({ ...config, query_timeout: LONG_STATEMENT_TIMEOUT_MS }) as pg.QueryConfig
export const ddlQuery = (text: string, values: unknown[] = []): pg.QueryConfig => longQuery({ text, values })

/** A DO block converting columns still typed JSONB (tables from earlier versions) to TEXT. */
export function jsonbToText(s: string, table: string, columns: readonly string[]): string {
  const alters = columns.map((c) => `ALTER COLUMN ${c} TYPE TEXT USING ${c}::text`).join(', ')
  return `DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = '${s}' AND table_name = '${table}'
             AND column_name = '${columns[0]}' AND data_type = 'jsonb') THEN
    ALTER TABLE ${s}.${table} ${alters};
  END IF;
END $$;`
}
