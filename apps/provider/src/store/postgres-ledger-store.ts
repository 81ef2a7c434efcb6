// The demo ledger's store on PostgreSQL: its own tables in the keys store's schema and pool. A keyed mutation is
// optimistic: one read (document, its version and the key's recorded outcome), the mutation in JS, then one write
// statement that applies only if the document's version is unchanged — two round trips, one commit, no row lock
// held across the network. A lost race re-reads and re-runs the mutation; after a few lost races the mutation runs
// under SELECT … FOR UPDATE instead, so a hot document still makes progress. Reads and writes are group-committed
// (postgres-batch.ts): concurrent mutations share one read statement and one write statement. A mutation given the
// provider's claim (ApplyOptions.finish) finishes the claim in its write statement (writeFinishMany): the change and
// the key's outcome commit together, and a refund takes two round trips (claim, write) instead of three. A new key on
// a known document goes further (applyClaiming, claimWriteMany): claim, change and outcome in one statement.
import type pg from 'pg'
import type {
  ApplyOptions,
  ClaimingOptions,
  DemoLedgerStore,
  LedgerApplyResult,
  LedgerMutation,
} from './ledger-store.js'
import type { StoreAccess } from './outage.js'
import type { PostgresConnection } from './postgres-connection.js'
import { docId, type LedgerDb, ledgerDb, readFromKnown, remember, rememberWritten } from './postgres-ledger-db.js'
import { ledgerParameters, type ReadRow, type Related, type Seen } from './postgres-ledger-sql.js'
import type { ClaimRequest } from './store.js'

const OPTIMISTIC_ATTEMPTS = 4
const UNIQUE_VIOLATION = '23505'

type Doc = Record<string, unknown>
type Change = ReturnType<LedgerMutation<unknown>>

const parse = (text: string | null | undefined) => (text == null ? undefined : JSON.parse(text))

/**
 * A change as the write statements take it: the new document (JSON, null to keep it), and the related documents as
 * the mutation saw them (the write applies only if they are unchanged).
 */
function writeOf(change: Change, got: ReadRow, alsoRead: Related): { doc: string | null; seen: Seen[] } {
  return {
    doc: change.doc === undefined ? null : JSON.stringify(change.doc),
    seen: alsoRead.map((d, i) => ({ kind: d.kind, ref: d.ref, doc: got.related[i] ?? null })),
  }
}

/**
 * One optimistic attempt: the outcome, 'retry' when the document changed (or the key got recorded) meanwhile. With
 * fromKnown, the read is skipped when the documents are known: a key recorded already then fails the write (its
 * ledger_keys row exists), and the retry reads it and replays.
 */
async function applyOptimistically(
  db: LedgerDb,
  key: string,
  kind: string,
  ref: string,
  mutate: LedgerMutation<unknown>,
  options: ApplyOptions,
  fromKnown: boolean,
): Promise<LedgerApplyResult<unknown> | 'retry' | 'locking'> {
  const alsoRead = options.alsoRead ?? []
  const guessed = fromKnown ? readFromKnown(db, kind, ref, alsoRead) : undefined
  const got = guessed ?? (await db.read({ key, kind, ref, alsoRead }))
  if (got?.outcome != null) return { outcome: parse(got.outcome), replayed: true }
  // A missing document has no version to compare: that (rare) case takes the locking path.
  if (got?.doc == null || got.version === null) return 'locking'
  if (guessed === undefined) {
    remember(db, kind, ref, got.doc, got.version)
    got.related.forEach((doc, i) => {
      const d = alsoRead[i]
      if (d !== undefined && doc !== null) remember(db, d.kind, d.ref, doc, undefined)
    })
  }
  const change = mutate(parse(got.doc) as Doc, undefined, got.related.map(parse))
  // Nothing recorded under the key means nothing in the write checks it: read the key's outcome first.
  if (guessed !== undefined && change.record === false) return 'retry'
  const outcome = change.record === false ? null : JSON.stringify(change.outcome)
  const { doc, seen } = writeOf(change, got, alsoRead)
  const record = options.finish?.recordOf(change.outcome)
  const finish =
    options.finish === undefined || record === undefined ? undefined : { owner: options.finish.owner, record }
  try {
    const applied = await db.write({
      key,
      kind,
      ref,
      doc,
      version: got.version,
      outcome,
      put: change.put,
      seen,
      finish,
    })
    if (applied !== false) {
      rememberWritten(db, kind, ref, doc, got.doc, got.version)
      const done = { outcome: change.outcome, replayed: false }
      return applied.finished === undefined ? done : { ...done, finished: applied.finished }
    }
  } catch (error) {
    // Another writer recorded this key (through another document) first: re-read, and replay it.
    if ((error as { code?: string }).code !== UNIQUE_VIOLATION) throw error
  }
  db.known.delete(docId(kind, ref))
  return 'retry'
}

/** Inside a transaction: the changed document, then the documents the change puts. */
async function writeChange(c: pg.PoolClient, s: string, kind: string, ref: string, change: Change) {
  if (change.doc !== undefined) {
    await c.query(`UPDATE ${s}.ledger_docs SET doc = $1, version = version + 1 WHERE kind = $2 AND ref = $3`, [
      JSON.stringify(change.doc),
      kind,
      ref,
    ])
  }
  if (change.put !== undefined && change.put.length > 0) {
    const docs = ledgerParameters.docs
    await c.query(
      `INSERT INTO ${s}.ledger_docs (kind, ref, doc) SELECT d.kind, d.ref, d.doc FROM ${docs.unnest('d')}
       ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc, version = ${s}.ledger_docs.version + 1`,
      docs.values(change.put),
    )
  }
}

/** The pessimistic path: the document's row lock serializes every keyed mutation of it. */
async function applyLocked(
  db: LedgerDb,
  key: string,
  kind: string,
  ref: string,
  mutate: LedgerMutation<unknown>,
  alsoRead: Related,
): Promise<LedgerApplyResult<unknown>> {
  const s = db.connection.schema
  await db.ensureTables()
  return db.connection.transaction(async (c) => {
    const got = await c.query(`SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 AND ref = $2 FOR UPDATE`, [kind, ref])
    const prior = await c.query(`SELECT outcome FROM ${s}.ledger_keys WHERE key = $1`, [key])
    if (prior.rows[0] !== undefined) return { outcome: parse(prior.rows[0].outcome), replayed: true }
    const related = []
    for (const d of alsoRead) {
      const r = await c.query(`SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 AND ref = $2`, [d.kind, d.ref])
      related.push(parse(r.rows[0]?.doc))
    }
    const change = mutate(parse(got.rows[0]?.doc) as Doc | undefined, undefined, related)
    await writeChange(c, s, kind, ref, change)
    if (change.record !== false) {
      await c.query(`INSERT INTO ${s}.ledger_keys (key, kind, ref, outcome) VALUES ($1, $2, $3, $4)`, [
        key,
        kind,
        ref,
        JSON.stringify(change.outcome),
      ])
    }
    return { outcome: change.outcome, replayed: false }
  })
}

/** Replaces a key's outcome and its document under both row locks (settlement; rare, so a plain transaction). */
async function rewriteLocked<R>(db: LedgerDb, key: string, kind: string, ref: string, mutate: LedgerMutation<R>) {
  const s = db.connection.schema
  // Once the tables exist this answers from memory: it proves nothing about writes (the transaction below does).
  await db.connection.guard(db.ensureTables, 'read')
  return db.connection.transaction(async (c): Promise<R | undefined> => {
    const got = await c.query(`SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 AND ref = $2 FOR UPDATE`, [kind, ref])
    const prior = await c.query(`SELECT outcome FROM ${s}.ledger_keys WHERE key = $1 FOR UPDATE`, [key])
    if (got.rows[0] === undefined || prior.rows[0] === undefined) return undefined
    const change = mutate(parse(got.rows[0].doc) as Doc, parse(prior.rows[0].outcome) as R)
    await writeChange(c, s, kind, ref, change as Change)
    await c.query(`UPDATE ${s}.ledger_keys SET outcome = $1 WHERE key = $2`, [JSON.stringify(change.outcome), key])
    return change.outcome
  })
}

/**
 * What an apply did (guard's access): a replay may have been answered by a read alone, or from memory — not evidence
 * that the server takes writes (StoreHealth.succeeded: it does not end a read-only outage).
 */
const applyAccess = (done: { replayed: boolean }): StoreAccess => (done.replayed ? 'read' : 'write')
/** What an applyClaiming did: undefined when it wrote nothing (perhaps sent nothing at all). */
const claimingAccess = (done: unknown): StoreAccess => (done === undefined ? 'read' : 'write')

/** The ledger store on an open connection; its tables are created on first use. */
export function openPostgresLedgerStore(connection: PostgresConnection): DemoLedgerStore {
  const db = ledgerDb(connection)
  const { guard } = connection
  return {
    kind: 'postgres',
    seed: (docs) => guard(async () => void (await db.run('seed', ledgerParameters.docs.values(docs)))),
    // Reads (get, list, getWithList, lookup): their success does not end a read-only outage (StoreHealth.succeeded).
    get: (kind, ref) =>
      guard(async () => parse((await db.run<{ doc: string }>('get', [kind, ref])).rows[0]?.doc), 'read'),
    list: (kind) =>
      guard(async () => (await db.run<{ doc: string }>('list', [kind])).rows.map((r) => JSON.parse(r.doc)), 'read'),
    getWithList: (kind, ref, listKind) =>
      guard(async () => {
        const got = await db.run<{ doc: string | null; list: string[] }>('getWithList', [kind, ref, listKind])
        const row = got.rows[0]
        return { doc: parse(row?.doc), list: (row?.list ?? []).map((d) => JSON.parse(d)) }
      }, 'read'),
    apply: <R>(key: string, kind: string, ref: string, mutate: LedgerMutation<R>, options?: ApplyOptions<R>) =>
      guard(async () => {
        const m = mutate as LedgerMutation<unknown>
        const opts = (options ?? {}) as ApplyOptions
        for (let i = 0; i < OPTIMISTIC_ATTEMPTS; i++) {
          const done = await applyOptimistically(db, key, kind, ref, m, opts, i === 0)
          if (done === 'locking') break
          if (done !== 'retry') return done as LedgerApplyResult<R>
        }
        // The locking path does not finish the key: the caller's own finish follows (finished stays absent).
        return (await applyLocked(db, key, kind, ref, m, opts.alsoRead ?? [])) as LedgerApplyResult<R>
      }, applyAccess),
    applyClaiming: async <R>(
      claim: ClaimRequest,
      kind: string,
      ref: string,
      mutate: LedgerMutation<R>,
      options: ClaimingOptions<R>,
    ): Promise<{ outcome: R } | undefined> => {
      const alsoRead = options.alsoRead ?? []
      // Only from known documents (one round trip in all); otherwise the usual path reads them.
      const got = readFromKnown(db, kind, ref, alsoRead)
      if (got === undefined || got.doc === null || got.version === null) return undefined
      const { doc: knownDoc, version } = got
      // Only the write is guarded: an answer from the documents known in memory says nothing of the database (it
      // must not end an outage in the store's health).
      return guard(async (): Promise<{ outcome: R } | undefined> => {
        const change = mutate(parse(knownDoc) as Doc, undefined, got.related.map(parse))
        if (change.record === false) return undefined
        const record = options.recordOf(change.outcome)
        if (record === undefined) return undefined
        const { doc, seen } = writeOf(change, got, alsoRead)
        const outcome = JSON.stringify(change.outcome)
        const wrote = await db.claimWrite({ claim, kind, ref, doc, version, outcome, put: change.put, seen, record })
        // Stale: forget the document, so the usual path reads it first instead of trying a write bound to fail.
        if (wrote === 'stale') db.known.delete(docId(kind, ref))
        if (wrote !== 'written') return undefined
        rememberWritten(db, kind, ref, doc, knownDoc, version)
        return { outcome: change.outcome }
      }, claimingAccess)
    },
    lookup: <R>(key: string) =>
      guard(
        async () => parse((await db.run<{ outcome: string }>('lookup', [key])).rows[0]?.outcome) as R | undefined,
        'read',
      ),
    rewrite: (key, kind, ref, mutate) => rewriteLocked(db, key, kind, ref, mutate),
  }
}
