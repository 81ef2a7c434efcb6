// 2025-era sessions shared by every replica on one PostgreSQL database: one row per open session (its random key,
// a hash of its owner, when it was last seen). DELETE removes the row, idleness is a comparison, so every replica
// gives the same answer. Its own small pool: session checks never queue behind refunds.
//
// Opening and touching are SQL functions created with the table: one round trip each, one autocommit statement.
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
// - a touch: the session's last_seen goes back to an earlier touch, so it idles out sooner than it would have.
// - never a close: DELETE is a synchronous commit (the server's setting), so a session answered as deleted stays
//   refused on every replica after any crash. It also flushes every open and touch before it.
import type { SessionCaps, SessionStore } from '@tollgate/mcp-endpoint'
import pg from 'pg'
import { schemaDdlLockKey } from './postgres-connection.js'

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
CREATE OR REPLACE FUNCTION ${s}.mcp_session_open(
  p_key TEXT, p_owner TEXT, p_now BIGINT, p_idle_ms BIGINT, p_max_sessions BIGINT, p_max_per_owner BIGINT
) RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  open_count BIGINT;
BEGIN
  -- See pg-session-store.ts: an open lost in a crash only makes the client initialize again.
  PERFORM set_config('synchronous_commit', 'off', true);
  -- One opener at a time, so the caps hold across replicas. Taken here, not around the call: each statement below
  -- takes its own snapshot (READ COMMITTED, VOLATILE), after the lock, so it sees every earlier opener's rows.
  PERFORM pg_advisory_xact_lock(${OPEN_LOCK_KEY});
  DELETE FROM ${t} WHERE last_seen <= p_now - p_idle_ms;
  DELETE FROM ${t} WHERE key IN (
    SELECT key FROM ${t} WHERE owner = p_owner ORDER BY last_seen DESC OFFSET p_max_per_owner - 1);
  SELECT count(*) INTO open_count FROM ${t};
  IF open_count >= p_max_sessions THEN
    RETURN false;
  END IF;
  INSERT INTO ${t} (key, owner, last_seen) VALUES (p_key, p_owner, p_now);
  RETURN true;
END
$fn$;
CREATE OR REPLACE FUNCTION ${s}.mcp_session_touch(p_key TEXT, p_now BIGINT, p_idle_ms BIGINT)
RETURNS BOOLEAN LANGUAGE plpgsql VOLATILE AS $fn$
BEGIN
  -- See pg-session-store.ts: a touch lost in a crash only shortens the session's idle life.
  PERFORM set_config('synchronous_commit', 'off', true);
  UPDATE ${t} SET last_seen = GREATEST(last_seen, p_now) WHERE key = p_key AND last_seen > p_now - p_idle_ms;
  RETURN FOUND;
END
$fn$;`
}

export interface PgSessionStoreOptions {
  connectionString: string
  /** Schema holding the table (created if absent); default 'tollgate_provider'. */
  schema?: string
  /** Pool size; default 4. */
  maxConnections?: number
}

export class PgSessionStore implements SessionStore {
  readonly #pool: pg.Pool
  readonly #schema: string

  private constructor(pool: pg.Pool, schema: string) {
    this.#pool = pool
    this.#schema = schema
  }

  static async open(options: PgSessionStoreOptions): Promise<PgSessionStore> {
    const s = options.schema ?? 'tollgate_provider'
    if (!SCHEMA_NAME.test(s)) throw new RangeError('schema must match [a-z_][a-z0-9_]{0,62}')
    const pool = new pg.Pool({ connectionString: options.connectionString, max: options.maxConnections ?? 4 })
    pool.on('error', () => {})
    try {
      // One statement batch is one implicit transaction: the lock is held until its DDL committed.
      await pool.query(`SELECT pg_advisory_xact_lock(hashtext('${schemaDdlLockKey(s)}'));
${sessionSchemaDdl(s)}`)
    } catch (error) {
      await pool.end().catch(() => {})
      throw error
    }
    return new PgSessionStore(pool, s)
  }

  async open(key: string, owner: string, nowMs: number, caps: SessionCaps): Promise<boolean> {
    const r = await this.#pool.query<{ opened: boolean }>(
      `SELECT ${this.#schema}.mcp_session_open($1, $2, $3, $4, $5, $6) AS opened`,
      [key, owner, nowMs, caps.idleMs, caps.maxSessions, caps.maxPerOwner],
    )
    return r.rows[0]?.opened === true
  }

  async touch(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    const r = await this.#pool.query<{ seen: boolean }>(
      `SELECT ${this.#schema}.mcp_session_touch($1, $2, $3) AS seen`,
      [key, nowMs, idleMs],
    )
    return r.rows[0]?.seen === true
  }

  // A synchronous commit (the server's synchronous_commit): see the top of this file.
  async close(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    const r = await this.#pool.query(`DELETE FROM ${this.#schema}.mcp_sessions WHERE key = $1 RETURNING last_seen`, [
      key,
    ])
    const row = r.rows[0] as { last_seen: string } | undefined
    return row !== undefined && Number(row.last_seen) > nowMs - idleMs
  }

  async dispose(): Promise<void> {
    await this.#pool.end()
  }
}
