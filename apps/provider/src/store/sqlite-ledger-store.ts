// The demo ledger's store on SQLite: its own tables on the keys store's connection, writes in its group commit.
import type Database from 'better-sqlite3'
import { StoreError } from '../errors.js'
import type {
  ApplyOptions,
  ClaimingOptions,
  DemoLedgerStore,
  LedgerApplyResult,
  LedgerDoc,
  LedgerMutation,
} from './ledger-store.js'
import type { SqliteConnection } from './sqlite-connection.js'
import type { ClaimRequest, KeyFinish } from './store.js'

/** The keys store's writes that the ledger's transactions make (inside them, so they commit together). */
export interface KeyWrites {
  /** Store.finish. */
  finish(key: string, owner: string, finish: KeyFinish): boolean
  /** A new key's row, claimed and finished at once; false (nothing written) when the key exists. */
  claimFinished(claim: ClaimRequest, finish: KeyFinish): boolean
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS ledger_docs (kind TEXT NOT NULL, ref TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (kind, ref));
CREATE TABLE IF NOT EXISTS ledger_keys (key TEXT PRIMARY KEY, kind TEXT NOT NULL, ref TEXT NOT NULL, outcome TEXT NOT NULL);
`

type Doc = Record<string, unknown>

function prepareLedgerStatements(db: Database.Database) {
  return {
    seed: db.prepare('INSERT INTO ledger_docs (kind, ref, doc) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
    get: db.prepare('SELECT doc FROM ledger_docs WHERE kind = ? AND ref = ?'),
    list: db.prepare('SELECT doc FROM ledger_docs WHERE kind = ? ORDER BY ref'),
    // Both arms walk the primary key in ref order, so SQLite merges them without a sort; part tells them apart.
    getWithList: db.prepare(
      `SELECT 0 AS part, ref, doc FROM ledger_docs WHERE kind = ? AND ref = ?
       UNION ALL SELECT 1, ref, doc FROM ledger_docs WHERE kind = ? ORDER BY ref`,
    ),
    put: db.prepare('UPDATE ledger_docs SET doc = ? WHERE kind = ? AND ref = ?'),
    upsert: db.prepare(
      'INSERT INTO ledger_docs (kind, ref, doc) VALUES (?, ?, ?) ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc',
    ),
    keyGet: db.prepare('SELECT outcome FROM ledger_keys WHERE key = ?'),
    keyPut: db.prepare('INSERT INTO ledger_keys (key, kind, ref, outcome) VALUES (?, ?, ?, ?)'),
    keySet: db.prepare('UPDATE ledger_keys SET outcome = ? WHERE key = ?'),
  }
}

type LedgerStatements = ReturnType<typeof prepareLedgerStatements>

function ledgerTransactions(q: LedgerStatements, keys: KeyWrites) {
  const readDoc = (kind: string, ref: string) => {
    const row = q.get.get(kind, ref) as { doc: string } | undefined
    return row === undefined ? undefined : (JSON.parse(row.doc) as Doc)
  }
  const readOutcome = (key: string) => {
    const row = q.keyGet.get(key) as { outcome: string } | undefined
    return row === undefined ? undefined : (JSON.parse(row.outcome) as unknown)
  }
  // A mutation run on the document and the related documents it reads, as they are inside this transaction.
  const changeOf = (kind: string, ref: string, mutate: LedgerMutation<unknown>, alsoRead: ApplyOptions['alsoRead']) =>
    mutate(
      readDoc(kind, ref),
      undefined,
      (alsoRead ?? []).map((d) => readDoc(d.kind, d.ref)),
    )
  // A mutation's document writes: the changed document, then any documents it adds or replaces.
  const writeDocs = (kind: string, ref: string, change: ReturnType<LedgerMutation<unknown>>) => {
    if (change.doc !== undefined) q.put.run(JSON.stringify(change.doc), kind, ref)
    for (const d of change.put ?? []) q.upsert.run(d.kind, d.ref, JSON.stringify(d.doc))
  }
  return {
    q,
    readDoc,
    readOutcome,
    seed: (docs: readonly LedgerDoc[]) => {
      for (const d of docs) q.seed.run(d.kind, d.ref, JSON.stringify(d.doc))
    },
    // Runs inside the group commit's IMMEDIATE transaction: the write lock is held before the key is read.
    apply: (
      key: string,
      kind: string,
      ref: string,
      mutate: LedgerMutation<unknown>,
      options: ApplyOptions | undefined,
    ): LedgerApplyResult<unknown> => {
      const prior = readOutcome(key)
      if (prior !== undefined) return { outcome: prior, replayed: true }
      const change = changeOf(kind, ref, mutate, options?.alsoRead)
      writeDocs(kind, ref, change)
      if (change.record !== false) q.keyPut.run(key, kind, ref, JSON.stringify(change.outcome))
      const finish = options?.finish
      const record = finish?.recordOf(change.outcome)
      if (finish === undefined || record === undefined) return { outcome: change.outcome, replayed: false }
      return { outcome: change.outcome, replayed: false, finished: keys.finish(key, finish.owner, record) }
    },
    applyClaiming: (
      claim: ClaimRequest,
      kind: string,
      ref: string,
      mutate: LedgerMutation<unknown>,
      options: ClaimingOptions<unknown>,
    ): { outcome: unknown } | undefined => {
      if (readOutcome(claim.key) !== undefined) return undefined
      const change = changeOf(kind, ref, mutate, options.alsoRead)
      if (change.record === false) return undefined
      const record = options.recordOf(change.outcome)
      // The key's row first: when the key exists, nothing has been written.
      if (record === undefined || !keys.claimFinished(claim, record)) return undefined
      writeDocs(kind, ref, change)
      q.keyPut.run(claim.key, kind, ref, JSON.stringify(change.outcome))
      return { outcome: change.outcome }
    },
    rewrite: (key: string, kind: string, ref: string, mutate: LedgerMutation<unknown>): unknown => {
      const doc = readDoc(kind, ref)
      const prior = readOutcome(key)
      if (doc === undefined || prior === undefined) return undefined
      const change = mutate(doc, prior)
      writeDocs(kind, ref, change)
      q.keySet.run(JSON.stringify(change.outcome), key)
      return change.outcome
    },
  }
}

/** The ledger store on an open connection (creates its tables). */
export function openSqliteLedgerStore(c: SqliteConnection, keys: KeyWrites): DemoLedgerStore {
  try {
    c.db.exec(SCHEMA)
  } catch (cause) {
    throw new StoreError('cannot create the demo ledger tables', { cause })
  }
  const tx = ledgerTransactions(prepareLedgerStatements(c.db), keys)
  return {
    kind: 'sqlite',
    seed: (docs) => c.write(() => tx.seed(docs)),
    get: (kind, ref) => c.read(() => tx.readDoc(kind, ref)),
    list: (kind) => c.read(() => (tx.q.list.all(kind) as { doc: string }[]).map((r) => JSON.parse(r.doc) as Doc)),
    getWithList: (kind, ref, listKind) =>
      c.read(() => {
        let doc: Doc | undefined
        const list: Doc[] = []
        for (const row of tx.q.getWithList.all(kind, ref, listKind) as { part: number; doc: string }[]) {
          if (row.part === 0) doc = JSON.parse(row.doc) as Doc
          else list.push(JSON.parse(row.doc) as Doc)
        }
        return { doc, list }
      }),
    apply: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>, options?: ApplyOptions<R>) =>
      c.write(
        () =>
          tx.apply(key, kind, ref, mutate as LedgerMutation<unknown>, options as ApplyOptions) as LedgerApplyResult<R>,
        // Without a finish, answered at its COMMIT: the demo ledger's only caller, the provider's rules, records the
        // outcome next (a finish that waits for the WAL sync, which covers this commit) before answering; reads wait
        // for it too. A finish made here is the key's outcome: it waits for the sync like any finish.
        (applied) => applied.finished !== undefined,
      ),
    applyClaiming: <R>(
      claim: ClaimRequest,
      kind: string,
      ref: string,
      mutate: LedgerMutation<R>,
      options: ClaimingOptions<R>,
    ) =>
      c.write(
        () =>
          tx.applyClaiming(claim, kind, ref, mutate as LedgerMutation<unknown>, options as ClaimingOptions<unknown>) as
            | { outcome: R }
            | undefined,
        // The key's outcome: it waits for the WAL sync like any finish. Nothing written: nothing to wait for.
        (done) => done !== undefined,
      ),
    lookup: <R>(key: string) => c.read(() => tx.readOutcome(key) as R | undefined),
    rewrite: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>) =>
      c.write(() => tx.rewrite(key, kind, ref, mutate as LedgerMutation<unknown>) as R | undefined),
  }
}
