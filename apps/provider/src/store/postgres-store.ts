// Replicated store: PostgreSQL. The per-key claim is a row (INSERT … ON CONFLICT DO NOTHING) with a lease, so two
// replicas sharing the database never both run one key; ledger mutations lock their row (SELECT … FOR UPDATE).
import pg from 'pg'
import { StoreError } from '../errors.js'
import type {
  ClaimRequest,
  ClaimResult,
  LedgerApplyResult,
  LedgerDoc,
  LedgerMutation,
  OperationRow,
  RefundRecord,
  Store,
} from './store.js'

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

function schemaSql(s: string): string {
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.operations (
  key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, operation TEXT NOT NULL, target_ref TEXT NOT NULL,
  status TEXT NOT NULL, result JSONB, refusal JSONB, owner TEXT NOT NULL, lease_until BIGINT NOT NULL,
  created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS operations_updated ON ${s}.operations(updated_at);
CREATE TABLE IF NOT EXISTS ${s}.refunds (
  refund_ref TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, transaction_ref TEXT NOT NULL,
  amount_minor BIGINT NOT NULL, currency TEXT NOT NULL, status TEXT NOT NULL, created_at BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS refunds_tx ON ${s}.refunds(transaction_ref);
CREATE TABLE IF NOT EXISTS ${s}.ledger_docs (kind TEXT NOT NULL, ref TEXT NOT NULL, doc JSONB NOT NULL, PRIMARY KEY (kind, ref));
CREATE TABLE IF NOT EXISTS ${s}.ledger_keys (key TEXT PRIMARY KEY, kind TEXT NOT NULL, ref TEXT NOT NULL, outcome JSONB NOT NULL);
`
}

interface Row {
  key: string
  fingerprint: string
  operation: string
  target_ref: string
  status: string
  result: Record<string, unknown> | null
  refusal: OperationRow['refusal']
  owner: string
  lease_until: string
  created_at: string
  updated_at: string
}

function toOperation(row: Row): OperationRow {
  return {
    key: row.key,
    fingerprint: row.fingerprint,
    operation: row.operation as OperationRow['operation'],
    targetRef: row.target_ref,
    status: row.status as OperationRow['status'],
    result: row.result,
    refusal: row.refusal,
    owner: row.owner,
    leaseUntilMs: Number(row.lease_until),
    createdAtMs: Number(row.created_at),
    updatedAtMs: Number(row.updated_at),
  }
}

export interface PostgresStoreOptions {
  connectionString: string
  /** Schema holding the tables (created if absent); default 'tollgate_provider'. [a-z_][a-z0-9_]*. */
  schema?: string
  /** Pool size; default 10. */
  maxConnections?: number
}

/** Opens a PostgreSQL store, creating its schema and tables if needed. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const s = options.schema ?? 'tollgate_provider'
  if (!SCHEMA_NAME.test(s)) throw new RangeError('schema must match [a-z_][a-z0-9_]{0,62}')
  const pool = new pg.Pool({ connectionString: options.connectionString, max: options.maxConnections ?? 10 })
  // An idle client error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => {})
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn()
    } catch (cause) {
      throw cause instanceof StoreError ? cause : new StoreError('PostgreSQL store operation failed', { cause })
    }
  }
  // A ledger mutation's document writes: the changed document, then any documents it adds or replaces.
  const writeDocs = async (
    c: pg.PoolClient,
    kind: string,
    ref: string,
    change: Pick<ReturnType<LedgerMutation<unknown>>, 'doc' | 'put'>,
  ) => {
    if (change.doc !== undefined) {
      await c.query(`UPDATE ${s}.ledger_docs SET doc = $1 WHERE kind = $2 AND ref = $3`, [
        JSON.stringify(change.doc),
        kind,
        ref,
      ])
    }
    for (const d of change.put ?? []) {
      await c.query(
        `INSERT INTO ${s}.ledger_docs (kind, ref, doc) VALUES ($1, $2, $3) ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc`,
        [d.kind, d.ref, JSON.stringify(d.doc)],
      )
    }
  }

  const tx = <T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> =>
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
  await guard(async () => {
    // Concurrent first starts race on CREATE … IF NOT EXISTS; serialize them with an advisory lock.
    await tx(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tollgate_provider_schema:${s}`])
      await c.query(schemaSql(s))
    })
  })

  const claim = (r: ClaimRequest): Promise<ClaimResult> =>
    guard(async () => {
      const ins = await pool.query(
        `INSERT INTO ${s}.operations (key, fingerprint, operation, target_ref, status, owner, lease_until, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'running', $5, $6, $7, $7) ON CONFLICT (key) DO NOTHING`,
        [r.key, r.fingerprint, r.operation, r.targetRef, r.owner, r.nowMs + r.leaseMs, r.nowMs],
      )
      if (ins.rowCount === 1) return { kind: 'claimed', recovering: false }
      const taken = await pool.query(
        `UPDATE ${s}.operations SET owner = $1, lease_until = $2, updated_at = $3
         WHERE key = $4 AND fingerprint = $5 AND status = 'running' AND lease_until <= $3`,
        [r.owner, r.nowMs + r.leaseMs, r.nowMs, r.key, r.fingerprint],
      )
      if (taken.rowCount === 1) return { kind: 'claimed', recovering: true }
      const got = await pool.query<Row>(`SELECT * FROM ${s}.operations WHERE key = $1`, [r.key])
      const row = got.rows[0]
      // Released between our INSERT and SELECT: try again from the top.
      if (row === undefined) return claim(r)
      return { kind: 'exists', row: toOperation(row) }
    })

  const json = (v: unknown) => (v === null ? null : JSON.stringify(v))

  return {
    kind: 'postgres',
    claim,
    finish: (key, owner, o, refund, nowMs) =>
      tx(async (c) => {
        const done = await c.query(
          `UPDATE ${s}.operations SET status = $1, result = $2, refusal = $3, updated_at = $4, lease_until = 0
           WHERE key = $5 AND owner = $6 AND status = 'running'`,
          [o.status, json(o.result), json(o.refusal), nowMs, key, owner],
        )
        if (done.rowCount !== 1) return false
        if (refund !== undefined) {
          await c.query(
            `INSERT INTO ${s}.refunds (refund_ref, key, transaction_ref, amount_minor, currency, status, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)`,
            [refund.refundRef, key, refund.transactionRef, refund.amountMinor, refund.currency, refund.status, nowMs],
          )
        }
        return true
      }),
    abandon: (key, owner) =>
      guard(async () => {
        await pool.query(
          `UPDATE ${s}.operations SET lease_until = 0 WHERE key = $1 AND owner = $2 AND status = 'running'`,
          [key, owner],
        )
      }),
    release: (key, owner) =>
      guard(async () => {
        await pool.query(`DELETE FROM ${s}.operations WHERE key = $1 AND owner = $2 AND status = 'running'`, [
          key,
          owner,
        ])
      }),
    settle: (key, o, nowMs) =>
      tx(async (c) => {
        const done = await c.query(
          `UPDATE ${s}.operations SET status = $1, result = $2, refusal = $3, updated_at = $4 WHERE key = $5 AND status = 'pending'`,
          [o.status, json(o.result), json(o.refusal), nowMs, key],
        )
        if (done.rowCount !== 1) return false
        if (o.status === 'succeeded')
          await c.query(`UPDATE ${s}.refunds SET status = 'succeeded' WHERE key = $1`, [key])
        else await c.query(`DELETE FROM ${s}.refunds WHERE key = $1`, [key])
        return true
      }),
    get: (key) =>
      guard(async () => {
        const got = await pool.query<Row>(`SELECT * FROM ${s}.operations WHERE key = $1`, [key])
        const row = got.rows[0]
        return row === undefined ? undefined : toOperation(row)
      }),
    refundsFor: (transactionRef) =>
      guard(async () => {
        const got = await pool.query(
          `SELECT * FROM ${s}.refunds WHERE transaction_ref = $1 ORDER BY created_at, refund_ref`,
          [transactionRef],
        )
        return got.rows.map((r: Record<string, unknown>) => ({
          refundRef: String(r.refund_ref),
          transactionRef: String(r.transaction_ref),
          amountMinor: Number(r.amount_minor),
          currency: String(r.currency),
          status: r.status as RefundRecord['status'],
        }))
      }),
    purge: (cutoffMs) =>
      tx(async (c) => {
        await c.query(
          `DELETE FROM ${s}.refunds WHERE key IN (SELECT key FROM ${s}.operations WHERE status IN ('succeeded','failed') AND updated_at < $1)`,
          [cutoffMs],
        )
        const done = await c.query(
          `DELETE FROM ${s}.operations WHERE status IN ('succeeded','failed') AND updated_at < $1`,
          [cutoffMs],
        )
        return done.rowCount ?? 0
      }),
    ledgerSeed: (docs: readonly LedgerDoc[]) =>
      tx(async (c) => {
        for (const d of docs) {
          await c.query(`INSERT INTO ${s}.ledger_docs (kind, ref, doc) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
            d.kind,
            d.ref,
            JSON.stringify(d.doc),
          ])
        }
      }),
    ledgerGet: (kind, ref) =>
      guard(async () => {
        const got = await pool.query(`SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 AND ref = $2`, [kind, ref])
        return got.rows[0]?.doc as Record<string, unknown> | undefined
      }),
    ledgerList: (kind) =>
      guard(async () => {
        const got = await pool.query(`SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 ORDER BY ref`, [kind])
        return got.rows.map((r: { doc: Record<string, unknown> }) => r.doc)
      }),
    ledgerApply: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>) =>
      tx(async (c): Promise<LedgerApplyResult<R>> => {
        // Lock the document first: every keyed mutation of one document is serialized, so the key check below
        // cannot race another transaction with the same key.
        const got = await c.query(`SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 AND ref = $2 FOR UPDATE`, [
          kind,
          ref,
        ])
        const prior = await c.query(`SELECT outcome FROM ${s}.ledger_keys WHERE key = $1`, [key])
        if (prior.rows[0] !== undefined) return { outcome: prior.rows[0].outcome as R, replayed: true }
        const change = mutate(got.rows[0]?.doc as Record<string, unknown> | undefined)
        await writeDocs(c, kind, ref, change)
        if (change.record !== false) {
          await c.query(`INSERT INTO ${s}.ledger_keys (key, kind, ref, outcome) VALUES ($1, $2, $3, $4)`, [
            key,
            kind,
            ref,
            JSON.stringify(change.outcome),
          ])
        }
        return { outcome: change.outcome, replayed: false }
      }),
    ledgerLookup: <R>(key: string) =>
      guard(async () => {
        const got = await pool.query(`SELECT outcome FROM ${s}.ledger_keys WHERE key = $1`, [key])
        return got.rows[0]?.outcome as R | undefined
      }),
    ledgerRewrite: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>) =>
      tx(async (c): Promise<R | undefined> => {
        const got = await c.query(`SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 AND ref = $2 FOR UPDATE`, [
          kind,
          ref,
        ])
        const prior = await c.query(`SELECT outcome FROM ${s}.ledger_keys WHERE key = $1 FOR UPDATE`, [key])
        if (got.rows[0] === undefined || prior.rows[0] === undefined) return undefined
        const change = mutate(got.rows[0].doc as Record<string, unknown>, prior.rows[0].outcome as R)
        await writeDocs(c, kind, ref, change)
        await c.query(`UPDATE ${s}.ledger_keys SET outcome = $1 WHERE key = $2`, [JSON.stringify(change.outcome), key])
        return change.outcome
      }),
    close: () => guard(() => pool.end()),
  }
}
