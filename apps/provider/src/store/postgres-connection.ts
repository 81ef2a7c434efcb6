// The PostgreSQL pool shared by the keys store and the demo ledger's store: options, error wrapping, transactions
// and schema DDL.
import pg from 'pg'
import { StoreError } from '../errors.js'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

export interface PostgresStoreOptions {
  connectionString: string
  /** Schema holding the tables (created if absent); default 'tollgate_provider'. [a-z_][a-z0-9_]*. */
  schema?: string
  /** Pool size; default 10 (plus 2 connections for claims, see claimPool). */
  maxConnections?: number
  /** How long to wait for a connection to the server; default 10 000 ms. */
  connectTimeoutMs?: number
}

/** What a store's statements need: the pools, its schema, and error wrapping. */
export interface PostgresConnection {
  pool: pg.Pool
  /**
   * A small pool (2 connections) whose commits do not wait for the WAL flush (synchronous_commit=off), for claims
   * only: see claimPoolSettings. Never for a write another caller could read and answer on.
   */
  claimPool: pg.Pool
  schema: string
  /** Runs fn; any failure becomes a StoreError (the cause kept for logs, never in the message). */
  guard<T>(fn: () => Promise<T>): Promise<T>
  /** BEGIN … COMMIT on one pooled client (ROLLBACK on failure). */
  transaction<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T>
  /** Closes both pools. */
  end(): Promise<void>
}

/**
 * Why a claim need not wait for its own WAL flush. A claim row only ever answers a caller of the same key, and only
 * "in_progress" (not a money answer). Everything a claim guards commits after it, synchronously, before any answer:
 * the billing write and the outcome (finish). PostgreSQL's WAL is one sequence, and a synchronous commit returns once
 * the WAL up to its own commit record is on disk — which includes the claim's earlier commit record. So when anything
 * the claim protects is durable, so is the claim; a crash before that loses a claim that guarded nothing durable (no
 * answer was sent, and a retry claims afresh and asks a keyed billing system again). This saves one of a refund's
 * three flushes (each is most of a batch's round trip: a few ms on the development disk under load).
 */
const claimPoolSettings = { max: 2, options: '-c synchronous_commit=off' } as const

/** A pool for options (nothing connects yet). RangeError for bad options. */
export function connectPostgres(options: PostgresStoreOptions): PostgresConnection {
  const schema = options.schema ?? 'tollgate_provider'
  if (!SCHEMA_NAME.test(schema)) throw new RangeError('schema must match [a-z_][a-z0-9_]{0,62}')
  const max = options.maxConnections ?? 10
  if (!Number.isInteger(max) || max < 1) throw new RangeError('maxConnections must be a whole number ≥ 1')
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000
  if (!Number.isInteger(connectTimeoutMs) || connectTimeoutMs < 1)
    throw new RangeError('connectTimeoutMs must be a whole number ≥ 1')
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max,
    connectionTimeoutMillis: connectTimeoutMs,
  })
  const claimPool = new pg.Pool({
    connectionString: options.connectionString,
    connectionTimeoutMillis: connectTimeoutMs,
    ...claimPoolSettings,
  })
  // An idle client error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => {})
  claimPool.on('error', () => {})
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn()
    } catch (cause) {
      throw cause instanceof StoreError ? cause : new StoreError('PostgreSQL store operation failed', { cause })
    }
  }
  const transaction = <T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> =>
    guard(async () => {
      const c = await pool.connect()
      try {
        await c.query('BEGIN')
        const out = await fn(c)
        await c.query('COMMIT')
        return out
      } catch (e) {
        await c.query('ROLLBACK').catch(() => {})
        throw e
      } finally {
        c.release()
      }
    })
  const end = async () => {
    await Promise.all([pool.end(), claimPool.end()])
  }
  return { pool, claimPool, schema, guard, transaction, end }
}

/**
 * The one advisory lock every DDL of a schema takes (keys, demo ledger, 2025-era sessions): replicas starting at once
 * race on CREATE … IF NOT EXISTS otherwise, and two different locks around overlapping DDL can deadlock (40P01).
 */
export const schemaDdlLockKey = (schema: string) => `tollgate_provider_ddl:${schema}`

/** Runs DDL under the schema's DDL lock. */
export function runSchemaDdl(c: PostgresConnection, ddl: string): Promise<void> {
  return c.transaction(async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [schemaDdlLockKey(c.schema)])
    await client.query(ddl)
  })
}

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
