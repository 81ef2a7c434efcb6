// 2025-era sessions shared by every replica on one PostgreSQL database: one row per open session (its random key,
// a hash of its owner, when it was last seen). DELETE removes the row, idleness is a comparison, so every replica
// gives the same answer. Its own small pool: session checks never queue behind refunds.
import type { SessionCaps, SessionStore } from '@tollgate/mcp-endpoint'
import pg from 'pg'
import { schemaDdlLockKey } from './postgres-connection.js'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface PgSessionStoreOptions {
  connectionString: string
  /** Schema holding the table (created if absent); default 'tollgate_provider'. */
  schema?: string
  /** Pool size; default 4. */
  maxConnections?: number
}

export class PgSessionStore implements SessionStore {
  readonly #pool: pg.Pool
  readonly #t: string

  private constructor(pool: pg.Pool, table: string) {
    this.#pool = pool
    this.#t = table
  }

  static async open(options: PgSessionStoreOptions): Promise<PgSessionStore> {
    const s = options.schema ?? 'tollgate_provider'
    if (!SCHEMA_NAME.test(s)) throw new RangeError('schema must match [a-z_][a-z0-9_]{0,62}')
    const pool = new pg.Pool({ connectionString: options.connectionString, max: options.maxConnections ?? 4 })
    pool.on('error', () => {})
    try {
      // One statement batch is one implicit transaction: the lock is held until its DDL committed.
      await pool.query(`SELECT pg_advisory_xact_lock(hashtext('${schemaDdlLockKey(s)}'));
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.mcp_sessions (key TEXT PRIMARY KEY, owner TEXT NOT NULL, last_seen BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS mcp_sessions_owner ON ${s}.mcp_sessions(owner, last_seen);`)
    } catch (error) {
      await pool.end().catch(() => {})
      throw error
    }
    return new PgSessionStore(pool, `${s}.mcp_sessions`)
  }

  async open(key: string, owner: string, nowMs: number, caps: SessionCaps): Promise<boolean> {
    const client = await this.#pool.connect()
    try {
      await client.query('BEGIN')
      // One opener at a time per database, so the caps hold across replicas (opening is rare next to calls).
      await client.query('SELECT pg_advisory_xact_lock(7301)')
      await client.query(`DELETE FROM ${this.#t} WHERE last_seen <= $1`, [nowMs - caps.idleMs])
      await client.query(
        `DELETE FROM ${this.#t} WHERE key IN (SELECT key FROM ${this.#t} WHERE owner = $1 ORDER BY last_seen DESC OFFSET $2)`,
        [owner, caps.maxPerOwner - 1],
      )
      const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.#t}`)
      if (Number(rows[0]?.n ?? 0) >= caps.maxSessions) {
        await client.query('COMMIT')
        return false
      }
      await client.query(`INSERT INTO ${this.#t} (key, owner, last_seen) VALUES ($1, $2, $3)`, [key, owner, nowMs])
      await client.query('COMMIT')
      return true
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
  }

  async touch(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    const r = await this.#pool.query(
      `UPDATE ${this.#t} SET last_seen = GREATEST(last_seen, $2) WHERE key = $1 AND last_seen > $3`,
      [key, nowMs, nowMs - idleMs],
    )
    return r.rowCount === 1
  }

  async close(key: string, nowMs: number, idleMs: number): Promise<boolean> {
    const r = await this.#pool.query(`DELETE FROM ${this.#t} WHERE key = $1 RETURNING last_seen`, [key])
    const row = r.rows[0] as { last_seen: string } | undefined
    return row !== undefined && Number(row.last_seen) > nowMs - idleMs
  }

  async dispose(): Promise<void> {
    await this.#pool.end()
  }
}
