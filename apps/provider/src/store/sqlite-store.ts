// Embedded store: one SQLite file in WAL mode. One process per file is the supported deployment.
import type Database from 'better-sqlite3'
import { attachLedgerStore } from './ledger-store.js'
import {
  openSqliteConnection,
  type SqliteConnection,
  type SqliteConnectionHooks,
  type SqliteDurability,
  type SqliteSettings,
} from './sqlite-connection.js'
import { openSqliteLedgerStore } from './sqlite-ledger-store.js'
import {
  type ClaimRequest,
  type ClaimResult,
  jsonOrNull,
  type KeyFinish,
  type OperationsRow,
  type Outcome,
  type Store,
  toOperation,
} from './store.js'

export type { SqliteDurability, SqliteSettings } from './sqlite-connection.js'

// result and refusal hold the JSON text as first written: a replay answers the same bytes. The store keeps keys and
// their outcomes only: a refund's record is its key's result (refund_ref, transaction, amount), and the billing system
// keeps its own. Files from earlier builds also hold a `refunds` table — a second copy of each refund, written with
// three index entries (one at a scattered page) and never read; nothing writes or reads it now.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS operations (
  key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, operation TEXT NOT NULL, target_ref TEXT NOT NULL,
  status TEXT NOT NULL, result TEXT, refusal TEXT, owner TEXT NOT NULL, lease_until INTEGER NOT NULL,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS operations_updated ON operations(updated_at);
CREATE TABLE IF NOT EXISTS readiness (id INTEGER PRIMARY KEY CHECK (id = 1), checked_at INTEGER NOT NULL);
`

export interface SqliteStoreOptions {
  /** Default 'power-loss'. */
  durability?: SqliteDurability
}

/** A SQLite store; `settings` is read back from the connection after opening (what is really in force). */
export interface SqliteStore extends Store {
  readonly settings: SqliteSettings
}

/** Opens (creating if needed) a SQLite store at file. RangeError for an unknown durability. */
export function openSqliteStore(
  file: string,
  options: SqliteStoreOptions = {},
  /** Internal seam for tests: the WAL sync. */
  hooks: SqliteConnectionHooks = {},
): SqliteStore {
  const connection = openSqliteConnection(file, options.durability ?? 'power-loss', SCHEMA, hooks)
  const tx = keyTransactions(prepareKeyStatements(connection.db))
  const store = keysStore(connection, tx)
  attachLedgerStore(store, () =>
    openSqliteLedgerStore(connection, {
      finish: (key, owner, f) => tx.finish(key, owner, f.outcome, f.nowMs),
      claimFinished: tx.claimFinished,
    }),
  )
  return store
}

function prepareKeyStatements(db: Database.Database) {
  return {
    insert: db.prepare(
      `INSERT INTO operations (key, fingerprint, operation, target_ref, status, owner, lease_until, created_at, updated_at)
       VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
    ),
    // A key claimed and finished at once (DemoLedgerStore.applyClaiming): the row is written final, lease ended.
    insertFinal: db.prepare(
      `INSERT INTO operations (key, fingerprint, operation, target_ref, status, result, refusal, owner, lease_until, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT (key) DO NOTHING`,
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
    purgeOps: db.prepare(`DELETE FROM operations WHERE status IN ('succeeded','failed') AND updated_at < ?`),
    countPending: db.prepare(`SELECT count(*) AS n FROM operations WHERE status = 'pending'`),
    probe: db.prepare(
      `INSERT INTO readiness (id, checked_at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET checked_at = excluded.checked_at`,
    ),
  }
}

type KeyStatements = ReturnType<typeof prepareKeyStatements>

// Plain functions: each runs as one write of a group commit, which makes it atomic (sqlite-connection.ts).
function keyTransactions(q: KeyStatements) {
  return {
    q,
    claim: (r: ClaimRequest): ClaimResult => {
      const at = r.nowMs
      const inserted = q.insert.run(r.key, r.fingerprint, r.operation, r.targetRef, r.owner, at + r.leaseMs, at, at)
      if (inserted.changes === 1) return { kind: 'claimed', recovering: false }
      const row = toOperation(q.get.get(r.key) as OperationsRow)
      if (row.fingerprint === r.fingerprint && row.status === 'running' && row.leaseUntilMs <= at) {
        const taken = q.takeover.run(r.owner, at + r.leaseMs, at, r.key, at)
        if (taken.changes === 1) return { kind: 'claimed', recovering: true }
      }
      return { kind: 'exists', row }
    },
    finish: (key: string, owner: string, o: Outcome, nowMs: number): boolean =>
      q.finish.run(o.status, jsonOrNull(o.result), jsonOrNull(o.refusal), nowMs, key, owner).changes === 1,
    // Inside the ledger's transaction: false (nothing written) when the key exists.
    claimFinished: (r: ClaimRequest, { outcome: o, nowMs: at }: KeyFinish): boolean => {
      const result = jsonOrNull(o.result)
      const refusal = jsonOrNull(o.refusal)
      const row = [r.key, r.fingerprint, r.operation, r.targetRef, o.status, result, refusal, r.owner, at, at]
      return q.insertFinal.run(...row).changes === 1
    },
    settle: (key: string, o: Outcome, nowMs: number): boolean =>
      q.settle.run(o.status, jsonOrNull(o.result), jsonOrNull(o.refusal), nowMs, key).changes === 1,
    purge: (cutoffMs: number): number => q.purgeOps.run(cutoffMs).changes,
  }
}

function keysStore(c: SqliteConnection, tx: ReturnType<typeof keyTransactions>): SqliteStore {
  const { q } = tx
  return {
    kind: 'sqlite',
    settings: c.settings,
    // A won claim is answered at its COMMIT, not after the WAL sync: the claimant always ends it with a write that
    // waits for the disk (finish, release or abandon) before anything is answered, and that sync covers the claim
    // (the WAL is one sequence); reads wait for it as well. A power loss before then loses a claim no answer
    // reflected — a retry claims afresh and the keyed billing replays. A claim that found a row ('exists') is
    // answered from that row, so it waits for the disk as before.
    claim: (r) =>
      c.write(
        () => tx.claim(r),
        (result) => result.kind === 'exists',
      ),
    finish: (key, owner, o, nowMs) => c.write(() => tx.finish(key, owner, o, nowMs)),
    abandon: (key, owner) => c.write(() => void q.abandon.run(key, owner)),
    release: (key, owner) => c.write(() => void q.release.run(key, owner)),
    settle: (key, o, nowMs) => c.write(() => tx.settle(key, o, nowMs)),
    get: (key) =>
      c.read(() => {
        const row = q.get.get(key) as OperationsRow | undefined
        return row === undefined ? undefined : toOperation(row)
      }),
    purge: (cutoffMs) => c.write(() => tx.purge(cutoffMs)),
    countPending: () => c.read(() => (q.countPending.get() as { n: number }).n),
    // A write of its own through the group commit (synced like any other with 'power-loss').
    probe: () => c.write(() => void q.probe.run(Date.now())),
    onOutage: (listener) => c.health.onDown(listener),
    close: () => c.read(() => c.close()),
  }
}
