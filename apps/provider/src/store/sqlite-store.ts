// Embedded store: one SQLite file in WAL mode. One process per file is the supported deployment.
import Database from 'better-sqlite3'
import { StoreError } from '../errors.js'
import type {
  ClaimRequest,
  ClaimResult,
  LedgerApplyResult,
  LedgerDoc,
  LedgerMutation,
  OperationRow,
  Outcome,
  RefundRecord,
  Store,
} from './store.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS operations (
  key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, operation TEXT NOT NULL, target_ref TEXT NOT NULL,
  status TEXT NOT NULL, result TEXT, refusal TEXT, owner TEXT NOT NULL, lease_until INTEGER NOT NULL,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS operations_updated ON operations(updated_at);
CREATE TABLE IF NOT EXISTS refunds (
  refund_ref TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, transaction_ref TEXT NOT NULL,
  amount_minor INTEGER NOT NULL, currency TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS refunds_tx ON refunds(transaction_ref);
CREATE TABLE IF NOT EXISTS ledger_docs (kind TEXT NOT NULL, ref TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (kind, ref));
CREATE TABLE IF NOT EXISTS ledger_keys (key TEXT PRIMARY KEY, kind TEXT NOT NULL, ref TEXT NOT NULL, outcome TEXT NOT NULL);
`

interface Row {
  key: string
  fingerprint: string
  operation: string
  target_ref: string
  status: string
  result: string | null
  refusal: string | null
  owner: string
  lease_until: number
  created_at: number
  updated_at: number
}

function toOperation(row: Row): OperationRow {
  return {
    key: row.key,
    fingerprint: row.fingerprint,
    operation: row.operation as OperationRow['operation'],
    targetRef: row.target_ref,
    status: row.status as OperationRow['status'],
    result: row.result === null ? null : (JSON.parse(row.result) as Record<string, unknown>),
    refusal: row.refusal === null ? null : (JSON.parse(row.refusal) as OperationRow['refusal']),
    owner: row.owner,
    leaseUntilMs: Number(row.lease_until),
    createdAtMs: Number(row.created_at),
    updatedAtMs: Number(row.updated_at),
  }
}

/** Opens (creating if needed) a SQLite store at file. */
export function openSqliteStore(file: string): Store {
  let db: Database.Database
  try {
    db = new Database(file)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('busy_timeout = 5000')
    db.exec(SCHEMA)
  } catch (cause) {
    throw new StoreError('cannot open the SQLite store', { cause })
  }
  const q = {
    insert: db.prepare(
      `INSERT INTO operations (key, fingerprint, operation, target_ref, status, owner, lease_until, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
    ),
    get: db.prepare('SELECT * FROM operations WHERE key = ?'),
    takeover: db.prepare(
      `UPDATE operations SET owner = ?, lease_until = ?, updated_at = ? WHERE key = ? AND status = 'running' AND lease_until <= ?`,
    ),
    finish: db.prepare(
      `UPDATE operations SET status = ?, result = ?, refusal = ?, updated_at = ?, lease_until = 0
       WHERE key = ? AND owner = ? AND status = 'running'`,
    ),
    abandon: db.prepare(`UPDATE operations SET lease_until = 0 WHERE key = ? AND owner = ? AND status = 'running'`),
    release: db.prepare(`DELETE FROM operations WHERE key = ? AND owner = ? AND status = 'running'`),
    settle: db.prepare(
      `UPDATE operations SET status = ?, result = ?, refusal = ?, updated_at = ? WHERE key = ? AND status = 'pending'`,
    ),
    insertRefund: db.prepare(
      `INSERT INTO refunds (refund_ref, key, transaction_ref, amount_minor, currency, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    settleRefund: db.prepare(`UPDATE refunds SET status = ? WHERE key = ?`),
    dropRefund: db.prepare(`DELETE FROM refunds WHERE key = ?`),
    refundsFor: db.prepare(`SELECT * FROM refunds WHERE transaction_ref = ? ORDER BY created_at, refund_ref`),
    purgeRefunds: db.prepare(
      `DELETE FROM refunds WHERE key IN (SELECT key FROM operations WHERE status IN ('succeeded','failed') AND updated_at < ?)`,
    ),
    purgeOps: db.prepare(`DELETE FROM operations WHERE status IN ('succeeded','failed') AND updated_at < ?`),
    seed: db.prepare('INSERT INTO ledger_docs (kind, ref, doc) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
    ledgerGet: db.prepare('SELECT doc FROM ledger_docs WHERE kind = ? AND ref = ?'),
    ledgerList: db.prepare('SELECT doc FROM ledger_docs WHERE kind = ? ORDER BY ref'),
    ledgerPut: db.prepare('UPDATE ledger_docs SET doc = ? WHERE kind = ? AND ref = ?'),
    keyGet: db.prepare('SELECT outcome FROM ledger_keys WHERE key = ?'),
    keyPut: db.prepare('INSERT INTO ledger_keys (key, kind, ref, outcome) VALUES (?, ?, ?, ?)'),
    keySet: db.prepare('UPDATE ledger_keys SET outcome = ? WHERE key = ?'),
  }

  const claimTx = db.transaction((r: ClaimRequest): ClaimResult => {
    const inserted = q.insert.run(
      r.key,
      r.fingerprint,
      r.operation,
      r.targetRef,
      r.owner,
      r.nowMs + r.leaseMs,
      r.nowMs,
      r.nowMs,
    )
    if (inserted.changes === 1) return { kind: 'claimed', recovering: false }
    const row = toOperation(q.get.get(r.key) as Row)
    if (row.fingerprint === r.fingerprint && row.status === 'running' && row.leaseUntilMs <= r.nowMs) {
      const taken = q.takeover.run(r.owner, r.nowMs + r.leaseMs, r.nowMs, r.key, r.nowMs)
      if (taken.changes === 1) return { kind: 'claimed', recovering: true }
    }
    return { kind: 'exists', row }
  })

  const finishTx = db.transaction(
    (key: string, owner: string, o: Outcome, refund: RefundRecord | undefined, nowMs: number): boolean => {
      const done = q.finish.run(
        o.status,
        o.result === null ? null : JSON.stringify(o.result),
        o.refusal === null ? null : JSON.stringify(o.refusal),
        nowMs,
        key,
        owner,
      )
      if (done.changes !== 1) return false
      if (refund !== undefined) {
        q.insertRefund.run(
          refund.refundRef,
          key,
          refund.transactionRef,
          refund.amountMinor,
          refund.currency,
          refund.status,
          nowMs,
        )
      }
      return true
    },
  )

  const settleTx = db.transaction((key: string, o: Outcome, nowMs: number): boolean => {
    const done = q.settle.run(
      o.status,
      o.result === null ? null : JSON.stringify(o.result),
      o.refusal === null ? null : JSON.stringify(o.refusal),
      nowMs,
      key,
    )
    if (done.changes !== 1) return false
    if (o.status === 'succeeded') q.settleRefund.run('succeeded', key)
    else q.dropRefund.run(key)
    return true
  })

  const purgeTx = db.transaction((cutoffMs: number): number => {
    q.purgeRefunds.run(cutoffMs)
    return q.purgeOps.run(cutoffMs).changes
  })

  const seedTx = db.transaction((docs: readonly LedgerDoc[]) => {
    for (const d of docs) q.seed.run(d.kind, d.ref, JSON.stringify(d.doc))
  })

  // Built once: better-sqlite3's transaction() wrapper is costly to create per call.
  const applyTx = db.transaction(
    (key: string, kind: string, ref: string, mutate: LedgerMutation<unknown>): LedgerApplyResult<unknown> => {
      const prior = q.keyGet.get(key) as { outcome: string } | undefined
      if (prior !== undefined) return { outcome: JSON.parse(prior.outcome), replayed: true }
      const row = q.ledgerGet.get(kind, ref) as { doc: string } | undefined
      const change = mutate(row === undefined ? undefined : (JSON.parse(row.doc) as Record<string, unknown>))
      if (change.doc !== undefined) q.ledgerPut.run(JSON.stringify(change.doc), kind, ref)
      if (change.record !== false) q.keyPut.run(key, kind, ref, JSON.stringify(change.outcome))
      return { outcome: change.outcome, replayed: false }
    },
  )

  const rewriteTx = db.transaction(
    (key: string, kind: string, ref: string, mutate: LedgerMutation<unknown>): unknown => {
      const row = q.ledgerGet.get(kind, ref) as { doc: string } | undefined
      if (row === undefined || q.keyGet.get(key) === undefined) return undefined
      const change = mutate(JSON.parse(row.doc) as Record<string, unknown>)
      if (change.doc !== undefined) q.ledgerPut.run(JSON.stringify(change.doc), kind, ref)
      q.keySet.run(JSON.stringify(change.outcome), key)
      return change.outcome
    },
  )

  const wrap = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn())
    } catch (cause) {
      return Promise.reject(
        cause instanceof StoreError ? cause : new StoreError('SQLite store operation failed', { cause }),
      )
    }
  }

  return {
    kind: 'sqlite',
    claim: (r) => wrap(() => claimTx.immediate(r)),
    finish: (key, owner, o, refund, nowMs) => wrap(() => finishTx.immediate(key, owner, o, refund, nowMs)),
    abandon: (key, owner) =>
      wrap(() => {
        q.abandon.run(key, owner)
      }),
    release: (key, owner) =>
      wrap(() => {
        q.release.run(key, owner)
      }),
    settle: (key, o, nowMs) => wrap(() => settleTx.immediate(key, o, nowMs)),
    get: (key) =>
      wrap(() => {
        const row = q.get.get(key) as Row | undefined
        return row === undefined ? undefined : toOperation(row)
      }),
    refundsFor: (transactionRef) =>
      wrap(() =>
        (q.refundsFor.all(transactionRef) as Record<string, unknown>[]).map((r) => ({
          refundRef: String(r.refund_ref),
          transactionRef: String(r.transaction_ref),
          amountMinor: Number(r.amount_minor),
          currency: String(r.currency),
          status: r.status as RefundRecord['status'],
        })),
      ),
    purge: (cutoffMs) => wrap(() => purgeTx.immediate(cutoffMs)),
    ledgerSeed: (docs) => wrap(() => seedTx.immediate(docs)),
    ledgerGet: (kind, ref) =>
      wrap(() => {
        const row = q.ledgerGet.get(kind, ref) as { doc: string } | undefined
        return row === undefined ? undefined : (JSON.parse(row.doc) as Record<string, unknown>)
      }),
    ledgerList: (kind) =>
      wrap(() =>
        (q.ledgerList.all(kind) as { doc: string }[]).map((r) => JSON.parse(r.doc) as Record<string, unknown>),
      ),
    // IMMEDIATE: take the write lock before reading so another process cannot interleave.
    ledgerApply: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>) =>
      wrap(() => applyTx.immediate(key, kind, ref, mutate as LedgerMutation<unknown>) as LedgerApplyResult<R>),
    ledgerLookup: <R>(key: string) =>
      wrap(() => {
        const row = q.keyGet.get(key) as { outcome: string } | undefined
        return row === undefined ? undefined : (JSON.parse(row.outcome) as R)
      }),
    ledgerRewrite: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>) =>
      wrap(() => rewriteTx.immediate(key, kind, ref, mutate as LedgerMutation<unknown>) as R | undefined),
    close: () =>
      wrap(() => {
        if (db.open) db.close()
      }),
  }
}
