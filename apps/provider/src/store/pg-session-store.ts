// 2025-era sessions shared by every replica on one PostgreSQL database: one row per open session (its random key,
// a hash of its owner, when it was last seen). DELETE removes the row, idleness is a comparison, so every replica
// gives the same answer. Nothing about a session is kept in the process: every request reads the shared row, so a
// session closed on any replica is refused on all of them from the moment the close was answered. Its own small
// pool: session checks never queue behind refunds.
//
// Opens, touches and closes each go through a group commit (postgres-batch.ts): the calls of one kind that arrive
// while two statements of that kind are in flight go to the server as one statement over arrays, each answered only
// after it committed. Opening and touching are SQL functions created with the table.
//
// A touch only reads unless the recorded last_seen is older than refreshMs (1/64 of the idle timeout): a read writes
// no WAL and commits nothing. So a session expires between idleMs − refreshMs and idleMs after its last request (never
// later), and per-owner eviction (least recently seen first) sees last_seen at that granularity.
//
// An open counts the rows once under a database-wide lock and decides its batch's opens one after another. Idle rows
// are swept only when the table is full (until then every touch refuses them), and an owner's rows are looked at only
// when the table holds at least maxPerOwner rows: both caps stay exact across replicas.
//
// Why open and touch commit without waiting for the WAL flush (synchronous_commit=off, set inside the function for
// its own transaction only), and close does not. A crash loses a suffix of the WAL, never a middle part, and any
// later synchronous commit flushes everything before it. What a crash can lose:
// - an open: the client's next request carries an id no replica knows and is refused 404 "Session not found", which
//   2025-era clients answer by initializing again. Nothing is charged or refunded by opening. The same open's sweep
//   of idle sessions (they stay refused: touch compares last_seen) and its eviction of the owner's least recently
//   seen session may be lost with it: that evicted session, the owner's own, works again until the owner's next open
//   evicts it again — the per-owner cap can be exceeded by the opens lost in a crash, the total cap cannot (a lost
//   open's row is lost too).
// - a touch that wrote: the session's last_seen goes back to an earlier one, so it idles out sooner than it would have.
// - never a close: DELETE is a synchronous commit (the server's setting; one flush per batch), so a session answered
//   as deleted stays refused on every replica after any crash. It also flushes every open and touch before it.
import type { SessionCaps, SessionStore } from '@tollgate/mcp-endpoint'
import pg from 'pg'
import { statementBatcher } from './postgres-batch.js'
import { clientConfigOf, ddlQuery, postgresTimeouts, schemaDdlLockKey } from './postgres-connection.js'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * The lock every open takes, database-wide (the key earlier versions took around their open transaction, so caps
 * stay exact while old and new replicas run side by side during a rolling deploy).
 */
const OPEN_LOCK_KEY = 7301

/** The table, index and functions; CREATE OR REPLACE makes every start bring the functions up to date. */
export function sessionSchemaDdl(s: string): string {
  const t = `${s}.mcp_sessions`
  return `CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${t} (key TEXT PRIMARY KEY, owner TEXT NOT NULL, last_seen BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS mcp_sessions_owner ON ${t}(owner, last_seen);
CREATE OR REPLACE FUNCTION ${s}.mcp_session_open_many(
  p_keys TEXT[], p_owners TEXT[], p_now BIGINT, p_idle_ms BIGINT, p_max_sessions BIGINT, p_max_per_owner BIGINT
) RETURNS BOOLEAN[] LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  open_count BIGINT;
  gone BIGINT;
  swept BOOLEAN := false;
  opened BOOLEAN[] := '{}';
BEGIN
  -- See pg-session-store.ts: an open lost in a crash only makes the client initialize again.
  PERFORM set_config('synchronous_commit', 'off', true);
  -- One batch of openers at a time, so the caps hold across replicas. Taken here, not around the call: each
  -- statement below takes its own snapshot (READ COMMITTED, VOLATILE), after the lock, so it sees every earlier
  -- opener's rows. The opens of a batch are then decided one after another, as if each had taken the lock.
  PERFORM pg_advisory_xact_lock(${OPEN_LOCK_KEY});
  -- The rows include idle sessions (swept only when they would decide a refusal), so open_count bounds both the
  -- owner's rows and the live ones: an owner's least recently seen beyond the cap are looked for only when the table
  -- could hold that many (idle ones go first: they are the least recently seen).
  SELECT count(*) INTO open_count FROM ${t};
  FOR i IN 1 .. coalesce(array_length(p_keys, 1), 0) LOOP
    IF open_count >= p_max_per_owner THEN
      DELETE FROM ${t} WHERE key IN (
        SELECT key FROM ${t} WHERE owner = p_owners[i] ORDER BY last_seen DESC OFFSET p_max_per_owner - 1);
      GET DIAGNOSTICS gone = ROW_COUNT;
      open_count := open_count - gone;
    END IF;
    IF open_count >= p_max_sessions AND NOT swept THEN
      DELETE FROM ${t} WHERE last_seen <= p_now - p_idle_ms;
      GET DIAGNOSTICS gone = ROW_COUNT;
      open_count := open_count - gone;
      swept := true;
    END IF;
    IF open_count >= p_max_sessions THEN
      opened := opened || false;
    ELSE
      INSERT INTO ${t} (key, owner, last_seen) VALUES (p_keys[i], p_owners[i], p_now);
      open_count := open_count + 1;
      opened := opened || true;
    END IF;
  END LOOP;
  RETURN opened;
END
$fn$;
CREATE OR REPLACE FUNCTION ${s}.mcp_session_touch_many(
  p_keys TEXT[], p_now BIGINT, p_idle_ms BIGINT, p_refresh_ms BIGINT
) RETURNS SETOF TEXT LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  fresh BIGINT;
BEGIN
  -- Seen within p_refresh_ms: open, and nothing is written (see pg-session-store.ts for the idle granularity).
  RETURN QUERY SELECT key FROM ${t} WHERE key = ANY(p_keys) AND last_seen > p_now - p_refresh_ms;
  GET DIAGNOSTICS fresh = ROW_COUNT;
  IF fresh < cardinality(p_keys) THEN
    -- See pg-session-store.ts: a touch lost in a crash only shortens the session's idle life.
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY UPDATE ${t} SET last_seen = GREATEST(last_seen, p_now)
      WHERE key = ANY(p_keys) AND last_seen > p_now - p_idle_ms AND last_seen <= p_now - p_refresh_ms RETURNING key;
  END IF;
END
$fn$;`
}

/**
 * A touch writes last_seen only when the recorded one is older than this (1/64 of the idle timeout: 4.7 s of the
 * default 300 s); a session therefore expires between idleMs − refreshMs and idleMs after its last request.
 */
export const refreshMs = (idleMs: number) => Math.floor(idleMs / 64)

/** Batches of one kind (open, touch, close) in flight at once; the pool holds one connection for each. */
const BATCHES_IN_FLIGHT = 2

export interface PgSessionStoreOptions {
  connectionString: string
  /** Schema holding the table (created if absent); default 'tollgate_provider'. */
  schema?: string
  /** Pool size; default 6 (two batches of each kind in flight). */
  maxConnections?: number
  /** As the store's (PostgresStoreOptions): default the connection string's connect_timeout, else 10 000 ms. */
  connectTimeoutMs?: number
  /**
   * As the store's: default the connection string's query_timeout, else 5 000 ms. A session check that times out is
   * answered 503 by the endpoint (a frozen database does not hold a 2025-era call forever).
   */
  queryTimeoutMs?: number
}

interface OpenCall {
  key: string
  owner: string
  nowMs: number
  caps: SessionCaps
}

interface SeenCall {
  key: string
  nowMs: number
  idleMs: number
}

const latest = (calls: readonly { nowMs: number }[]) => Math.max(...calls.map((c) => c.nowMs))

/**
 * A group commit of one kind of session call (open, touch, close): `run` decides a batch, answering undefined for a
 * call it leaves to be decided alone; calls for one key never share a statement.
 */
const batchedByKey = <C extends { key: string }>(run: (calls: readonly C[]) => Promise<(boolean | undefined)[]>) =>
  statementBatcher<C, boolean>({
    runBatch: run,
    runOne: async (call) => (await run([call]))[0] === true,
    rowOf: (c) => c.key,
    maxInFlight: BATCHES_IN_FLIGHT,
  })

export class PgSessionStore implements SessionStore {
  readonly #pool: pg.Pool
  readonly #schema: string
  readonly #open: (call: OpenCall) => Promise<boolean>
  readonly #touch: (call: SeenCall) => Promise<boolean>
  readonly #close: (call: SeenCall) => Promise<boolean>

  private constructor(pool: pg.Pool, schema: string) {
    this.#pool = pool
    this.#schema = schema
    // Group commit (postgres-batch.ts): calls of a kind arriving while its batches are in flight go together as one
    // statement, each answered only once that statement has committed. A batch is decided with the latest `now` of
    // its calls: never earlier than any call's own, so no session is taken for live longer than it is.
    const opens = async (calls: readonly OpenCall[]) => {
      // Calls with other caps (another LegacySessions on this store) are decided alone.
      const caps = (calls[0] as OpenCall).caps
      const same = (c: OpenCall) =>
        c.caps.idleMs === caps.idleMs &&
        c.caps.maxSessions === caps.maxSessions &&
        c.caps.maxPerOwner === caps.maxPerOwner
      const batch = calls.filter(same)
      const r = await pool.query<{ opened: boolean[] }>({
        name: 'mcp_session_open_many',
        text: `SELECT ${schema}.mcp_session_open_many($1, $2, $3, $4, $5, $6) AS opened`,
        values: [
          batch.map((c) => c.key),
          batch.map((c) => c.owner),
          latest(batch),
          caps.idleMs,
          caps.maxSessions,
          caps.maxPerOwner,
        ],
      })
      const opened = r.rows[0]?.opened ?? []
      let i = 0
      return calls.map((c) => (same(c) ? opened[i++] === true : undefined))
    }
    this.#open = batchedByKey(opens)
    const touches = async (calls: readonly SeenCall[]) => {
      // Calls with another idle timeout are decided alone.
      const idleMs = (calls[0] as SeenCall).idleMs
      const batch = calls.filter((c) => c.idleMs === idleMs)
      const r = await pool.query<{ key: string }>({
        name: 'mcp_session_touch_many',
        text: `SELECT key FROM ${schema}.mcp_session_touch_many($1, $2, $3, $4) AS key`,
        values: [batch.map((c) => c.key), latest(batch), idleMs, refreshMs(idleMs)],
      })
      const seen = new Set(r.rows.map((row) => row.key))
      return calls.map((c) => (c.idleMs === idleMs ? seen.has(c.key) : undefined))
    }
    this.#touch = batchedByKey(touches)
    // A synchronous commit (the server's synchronous_commit): see the top of this file. One flush per batch.
    const closes = async (calls: readonly SeenCall[]) => {
      const r = await pool.query<{ key: string; last_seen: string }>({
        name: 'mcp_session_close_many',
        text: `DELETE FROM ${schema}.mcp_sessions WHERE key = ANY($1) RETURNING key, last_seen`,
        values: [calls.map((c) => c.key)],
      })
      const gone = new Map(r.rows.map((row) => [row.key, Number(row.last_seen)]))
      return calls.map((c) => {
        const lastSeen = gone.get(c.key)
        return lastSeen !== undefined && lastSeen > c.nowMs - c.idleMs
      })
    }
    this.#close = batchedByKey(closes)
  }

  static async open(options: PgSessionStoreOptions): Promise<PgSessionStore> {
    const s = options.schema ?? 'tollgate_provider'
    if (!SCHEMA_NAME.test(s)) throw new RangeError('schema must match [a-z_][a-z0-9_]{0,62}')
    const config = clientConfigOf(options.connectionString)
    const { connectTimeoutMs, queryTimeoutMs } = postgresTimeouts(options, config)
    const pool = new pg.Pool({
      ...config,
      max: options.maxConnections ?? 6,
      connectionTimeoutMillis: connectTimeoutMs,
      query_timeout: queryTimeoutMs,
    })
    pool.on('error', () => {})
    try {
      // One statement batch is one implicit transaction: the lock is held until its DDL committed.
      await pool.query(
        ddlQuery(`SELECT pg_advisory_xact_lock(hashtext('${schemaDdlLockKey(s)}'));
${sessionSchemaDdl(s)}`),
      )
    } catch (error) {
      await pool.end().catch(() => {})
      throw error
    }
    return new PgSessionStore(pool, s)
  }

  open(key: string, owner: string, nowMs: number, caps: SessionCaps): Promise<boolean> {
    return this.#open({ key, owner, nowMs, caps })
  }

  touch(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    return this.#touch({ key, nowMs, idleMs })
  }

  close(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    return this.#close({ key, nowMs, idleMs })
  }

  /** Sessions open and seen within idleMs (every replica's): a count over at most maxSessions rows. */
  async countOpen(nowMs: number, idleMs: number): Promise<number> {
    const r = await this.#pool.query<{ n: number }>({
      name: 'mcp_session_count_open',
      text: `SELECT count(*)::int AS n FROM ${this.#schema}.mcp_sessions WHERE last_seen > $1`,
      values: [nowMs - idleMs],
    })
    return r.rows[0]?.n ?? 0
  }

  async dispose(): Promise<void> {
    await this.#pool.end()
  }
}
