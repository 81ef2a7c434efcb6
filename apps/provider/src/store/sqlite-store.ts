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

/**
 * What a committed write survives. 'process-crash': WAL with synchronous=NORMAL — a commit survives the process
 * being killed, but a power loss or kernel crash may roll back the last commits (the WAL is synced only at
 * checkpoints). 'power-loss': synchronous=FULL — every commit is fsynced before it returns.
 */
export type SqliteDurability = 'process-crash' | 'power-loss'

export interface SqliteStoreOptions {
  /** Default 'power-loss'. */
  durability?: SqliteDurability
}

/** A SQLite store; `settings` is read back from the connection after opening (what is really in force). */
export interface SqliteStore extends Store {
  readonly settings: { durability: SqliteDurability; journalMode: string; synchronous: 'NORMAL' | 'FULL' | string }
}

const SYNCHRONOUS = ['OFF', 'NORMAL', 'FULL', 'EXTRA']

/** Opens (creating if needed) a SQLite store at file. RangeError for an unknown durability. */
export function openSqliteStore(file: string, options: SqliteStoreOptions = {}): SqliteStore {
  const durability = options.durability ?? 'power-loss'
  if (durability !== 'process-crash' && durability !== 'power-loss') {
    throw new RangeError("durability must be 'process-crash' or 'power-loss'")
  }
  let db: Database.Database
  try {
    db = new Database(file)
    db.pragma('journal_mode = WAL')
    db.pragma(durability === 'power-loss' ? 'synchronous = FULL' : 'synchronous = NORMAL')
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
    ledgerUpsert: db.prepare(
      'INSERT INTO ledger_docs (kind, ref, doc) VALUES (?, ?, ?) ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc',
    ),
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
      for (const d of change.put ?? []) q.ledgerUpsert.run(d.kind, d.ref, JSON.stringify(d.doc))
      if (change.record !== false) q.keyPut.run(key, kind, ref, JSON.stringify(change.outcome))
      return { outcome: change.outcome, replayed: false }
    },
  )

  const rewriteTx = db.transaction(
    (key: string, kind: string, ref: string, mutate: LedgerMutation<unknown>): unknown => {
      const row = q.ledgerGet.get(kind, ref) as { doc: string } | undefined
      const prior = q.keyGet.get(key) as { outcome: string } | undefined
      if (row === undefined || prior === undefined) return undefined
      const change = mutate(JSON.parse(row.doc) as Record<string, unknown>, JSON.parse(prior.outcome))
      if (change.doc !== undefined) q.ledgerPut.run(JSON.stringify(change.doc), kind, ref)
      for (const d of change.put ?? []) q.ledgerUpsert.run(d.kind, d.ref, JSON.stringify(d.doc))
      q.keySet.run(JSON.stringify(change.outcome), key)
      return change.outcome
    },
  )

  const storeError = (cause: unknown) =>
    cause instanceof StoreError ? cause : new StoreError('SQLite store operation failed', { cause })

  const wrap = <T>(fn: () => T): Promise<T> => {
    try {
      return Promise.resolve(fn())
    } catch (cause) {
      return Promise.reject(storeError(cause))
    }
  }

  // Group commit. Writes issued in the same turn of the event loop run in one IMMEDIATE transaction, each inside
  // its own savepoint (better-sqlite3 nests a transaction function as a SAVEPOINT), and every caller is answered
  // only after that COMMIT returned — so a claim is still committed (fsynced with 'power-loss') before its caller
  // calls billing, and an outcome before the answer is sent. One failed write rolls back its savepoint only; a
  // failed COMMIT fails every write of the batch (none of them committed). Under load this turns one commit (and
  // one fsync) per write into one per batch.
  interface QueuedWrite {
    run: () => unknown
    resolve: (value: unknown) => void
    reject: (error: unknown) => void
  }
  type Done = { ok: true; value: unknown } | { ok: false; error: unknown }
  let queue: QueuedWrite[] = []
  let scheduled = false
  const runBatch = db.transaction((items: QueuedWrite[]): Done[] =>
    items.map((item): Done => {
      try {
        return { ok: true, value: item.run() }
      } catch (error) {
        return { ok: false, error }
      }
    }),
  )
  const flush = () => {
    scheduled = false
    const items = queue
    queue = []
    if (items.length === 0) return
    let done: Done[]
    try {
      done = runBatch.immediate(items)
    } catch (cause) {
      for (const item of items) item.reject(storeError(cause))
      return
    }
    items.forEach((item, i) => {
      const d = done[i] as Done
      if (d.ok) item.resolve(d.value)
      else item.reject(storeError(d.error))
    })
  }
  const write = <T>(run: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ run, resolve: resolve as (value: unknown) => void, reject })
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    })
  // A single statement is atomic on its own; inside a batch it needs no savepoint of its own.
  const single = (stmt: Database.Statement, ...params: unknown[]) => write(() => void stmt.run(...params))

  const sync = Number(db.pragma('synchronous', { simple: true }))
  const settings = {
    durability,
    journalMode: String(db.pragma('journal_mode', { simple: true })),
    synchronous: SYNCHRONOUS[sync] ?? String(sync),
  }

  return {
    kind: 'sqlite',
    settings,
    claim: (r) => write(() => claimTx(r)),
    finish: (key, owner, o, refund, nowMs) => write(() => finishTx(key, owner, o, refund, nowMs)),
    abandon: (key, owner) => single(q.abandon, key, owner),
    release: (key, owner) => single(q.release, key, owner),
    settle: (key, o, nowMs) => write(() => settleTx(key, o, nowMs)),
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
    purge: (cutoffMs) => write(() => purgeTx(cutoffMs)),
    ledgerSeed: (docs) => write(() => seedTx(docs)),
    ledgerGet: (kind, ref) =>
      wrap(() => {
        const row = q.ledgerGet.get(kind, ref) as { doc: string } | undefined
        return row === undefined ? undefined : (JSON.parse(row.doc) as Record<string, unknown>)
      }),
    ledgerList: (kind) =>
      wrap(() =>
        (q.ledgerList.all(kind) as { doc: string }[]).map((r) => JSON.parse(r.doc) as Record<string, unknown>),
      ),
    // Batched writes run in an IMMEDIATE transaction: the write lock is taken before the key is read.
    ledgerApply: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>) =>
      write(() => applyTx(key, kind, ref, mutate as LedgerMutation<unknown>) as LedgerApplyResult<R>),
    ledgerLookup: <R>(key: string) =>
      wrap(() => {
        const row = q.keyGet.get(key) as { outcome: string } | undefined
        return row === undefined ? undefined : (JSON.parse(row.outcome) as R)
      }),
    ledgerRewrite: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>) =>
      write(() => rewriteTx(key, kind, ref, mutate as LedgerMutation<unknown>) as R | undefined),
    close: () =>
      wrap(() => {
        // Writes already queued are committed (and answered) before the database closes.
        flush()
        if (db.open) db.close()
      }),
  }
}
