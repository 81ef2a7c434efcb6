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
  LedgerDoc,
  LedgerMutation,
} from './ledger-store.js'
import type { StoreAccess } from './outage.js'
import { statementBatcher } from './postgres-batch.js'
import {
  BATCHES_IN_FLIGHT,
  jsonbToText,
  keyRecordColumns,
  type PostgresConnection,
  runSchemaDdl,
} from './postgres-connection.js'
import type { ClaimRequest, KeyFinish } from './store.js'

const OPTIMISTIC_ATTEMPTS = 4
const UNIQUE_VIOLATION = '23505'

// TEXT, not JSONB: documents and outcomes come back with their keys in the order they were written.
function ledgerSchemaSql(s: string): string {
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.ledger_docs (kind TEXT NOT NULL, ref TEXT NOT NULL, doc TEXT NOT NULL,
  version BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (kind, ref));
CREATE TABLE IF NOT EXISTS ${s}.ledger_keys (key TEXT PRIMARY KEY, kind TEXT NOT NULL, ref TEXT NOT NULL, outcome TEXT NOT NULL);
ALTER TABLE ${s}.ledger_docs ADD COLUMN IF NOT EXISTS version BIGINT NOT NULL DEFAULT 0;
${jsonbToText(s, 'ledger_docs', ['doc'])}
${jsonbToText(s, 'ledger_keys', ['outcome'])}
`
}

function ledgerStatements(s: string) {
  // writeMany's changes ($1–$15), which writeFinishMany makes too: the documents still at the version their
  // mutations saw (and whose related documents are unchanged), the keys' ledger outcomes, the documents they put.
  const changesMany = `x AS (
        SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[])
          AS x(i, key, kind, ref, doc, version, outcome)),
      changed AS (
        UPDATE ${s}.ledger_docs d SET doc = COALESCE(x.doc, d.doc), version = d.version + 1
        FROM x WHERE d.kind = x.kind AND d.ref = x.ref AND d.version = x.version
          AND NOT EXISTS (
            SELECT 1 FROM unnest($12::int[], $13::text[], $14::text[], $15::text[]) AS seen(i, kind, ref, doc)
            LEFT JOIN ${s}.ledger_docs r ON r.kind = seen.kind AND r.ref = seen.ref
            WHERE seen.i = x.i AND r.doc IS DISTINCT FROM seen.doc)
        RETURNING x.i, x.key, x.kind, x.ref, x.outcome),
      recorded AS (
        INSERT INTO ${s}.ledger_keys (key, kind, ref, outcome)
        SELECT key, kind, ref, outcome FROM changed WHERE outcome IS NOT NULL RETURNING 1),
      put AS (
        INSERT INTO ${s}.ledger_docs (kind, ref, doc)
        SELECT p.kind, p.ref, p.doc FROM unnest($8::int[], $9::text[], $10::text[], $11::text[]) AS p(i, kind, ref, doc)
        JOIN changed ON changed.i = p.i
        ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc, version = ${s}.ledger_docs.version + 1 RETURNING 1)`
  return {
    seed: `INSERT INTO ${s}.ledger_docs (kind, ref, doc) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
      ON CONFLICT DO NOTHING`,
    get: `SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 AND ref = $2`,
    list: `SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 ORDER BY ref`,
    getWithList: `SELECT d.doc, ARRAY(SELECT r.doc FROM ${s}.ledger_docs r WHERE r.kind = $3 ORDER BY r.ref) AS list
      FROM (SELECT 1) AS one LEFT JOIN ${s}.ledger_docs d ON d.kind = $1 AND d.ref = $2`,
    lookup: `SELECT outcome FROM ${s}.ledger_keys WHERE key = $1`,
    // The key's outcome, the document (with its version) and the related documents in one round trip.
    read: `SELECT d.doc, d.version, k.outcome,
        ARRAY(SELECT r.doc FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS x(kind, ref, i)
              LEFT JOIN ${s}.ledger_docs r ON r.kind = x.kind AND r.ref = x.ref ORDER BY x.i) AS related
      FROM (SELECT 1) AS one
      LEFT JOIN ${s}.ledger_docs d ON d.kind = $2 AND d.ref = $3
      LEFT JOIN ${s}.ledger_keys k ON k.key = $1`,
    // read for many mutations: one row per mutation (x.i), its related documents from the flattened ($5, $6, $7).
    readMany: `SELECT x.i, d.doc, d.version, k.outcome,
        ARRAY(SELECT r.doc FROM unnest($5::int[], $6::text[], $7::text[]) WITH ORDINALITY AS y(i, kind, ref, o)
              LEFT JOIN ${s}.ledger_docs r ON r.kind = y.kind AND r.ref = y.ref WHERE y.i = x.i ORDER BY y.o) AS related
      FROM unnest($1::int[], $2::text[], $3::text[], $4::text[]) AS x(i, key, kind, ref)
      LEFT JOIN ${s}.ledger_docs d ON d.kind = x.kind AND d.ref = x.ref
      LEFT JOIN ${s}.ledger_keys k ON k.key = x.key`,
    // Applies only at the version read and if the related documents are still as the mutation saw them ($10–$12);
    // then records the key and puts the extra documents, all in one statement.
    write: `WITH changed AS (
        UPDATE ${s}.ledger_docs SET doc = COALESCE($4::text, doc), version = version + 1
        WHERE kind = $2 AND ref = $3 AND version = $5
          AND NOT EXISTS (SELECT 1 FROM unnest($10::text[], $11::text[], $12::text[]) AS seen(kind, ref, doc)
            LEFT JOIN ${s}.ledger_docs r ON r.kind = seen.kind AND r.ref = seen.ref WHERE r.doc IS DISTINCT FROM seen.doc)
        RETURNING 1),
      recorded AS (
        INSERT INTO ${s}.ledger_keys (key, kind, ref, outcome)
        SELECT $1, $2, $3, $6::text FROM changed WHERE $6::text IS NOT NULL RETURNING 1),
      put AS (
        INSERT INTO ${s}.ledger_docs (kind, ref, doc)
        SELECT x.kind, x.ref, x.doc FROM changed, unnest($7::text[], $8::text[], $9::text[]) AS x(kind, ref, doc)
        ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc, version = ${s}.ledger_docs.version + 1 RETURNING 1)
      SELECT (SELECT count(*) FROM changed)::int AS n`,
    // write for many mutations of distinct documents: the ones (x.i) whose version still matched.
    writeMany: `WITH ${changesMany}
      SELECT i FROM changed`,
    // writeMany that also finishes the provider's claims of the changed keys ($16–$21, one entry per item that
    // finishes): the keys store's finish (postgres-store.ts), applied only where the change applied and the claim is
    // still the owner's, so a change and its key's outcome commit together. Answers each changed item and whether
    // its claim finished.
    writeFinishMany: `WITH ${changesMany},
      f AS (
        SELECT * FROM unnest($16::int[], $17::text[], $18::text[], $19::text[], $20::text[], $21::bigint[])
          AS f(i, owner, status, result, refusal, at)),
      finished AS (
        UPDATE ${s}.operations o SET status = f.status, result = f.result, refusal = f.refusal, updated_at = f.at,
          lease_until = 0
        FROM changed JOIN f ON f.i = changed.i
        WHERE o.key = changed.key AND o.owner = f.owner AND o.status = 'running' RETURNING f.i)
      SELECT changed.i, finished.i IS NOT NULL AS finished FROM changed LEFT JOIN finished ON finished.i = changed.i`,
    // New keys claimed, changed and finished in one statement (DemoLedgerStore.applyClaiming). An item goes through
    // only if its document is still at the version the mutation saw (row-locked here, so it stays there), its related
    // documents are unchanged and the ledger has no outcome for its key (locked), and its key's row could be
    // inserted, already final (claimed; ON CONFLICT waits for a concurrent insert of the key, then skips). The
    // change, the ledger's outcome and the rows it puts follow only for the items this statement inserted (mine: key
    // and owner, so a key sent twice in one batch is written once). Answers those items (written) and the ones whose
    // document, related documents or ledger key failed the checks (not written: stale).
    claimWriteMany: `WITH x AS (
        SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[],
          $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[])
          AS x(i, key, kind, ref, doc, version, outcome, fingerprint, operation, target_ref, owner, status, result,
            refusal, at)),
      locked AS (
        SELECT x.i FROM x JOIN ${s}.ledger_docs d ON d.kind = x.kind AND d.ref = x.ref AND d.version = x.version
        WHERE NOT EXISTS (SELECT 1 FROM ${s}.ledger_keys k WHERE k.key = x.key)
          AND NOT EXISTS (
            SELECT 1 FROM unnest($16::int[], $17::text[], $18::text[], $19::text[]) AS seen(i, kind, ref, doc)
            LEFT JOIN ${s}.ledger_docs r ON r.kind = seen.kind AND r.ref = seen.ref
            WHERE seen.i = x.i AND r.doc IS DISTINCT FROM seen.doc)
        FOR UPDATE OF d),
      claimed AS (
        INSERT INTO ${s}.operations (key, fingerprint, operation, target_ref, status, result, refusal, owner,
          lease_until, created_at, updated_at)
        SELECT x.key, x.fingerprint, x.operation, x.target_ref, x.status, x.result, x.refusal, x.owner, 0, x.at, x.at
        FROM x JOIN locked ON locked.i = x.i
        ON CONFLICT (key) DO NOTHING RETURNING key, owner),
      mine AS (SELECT x.* FROM x JOIN claimed ON claimed.key = x.key AND claimed.owner = x.owner),
      changed AS (
        UPDATE ${s}.ledger_docs d SET doc = COALESCE(mine.doc, d.doc), version = d.version + 1
        FROM mine WHERE d.kind = mine.kind AND d.ref = mine.ref RETURNING mine.i),
      recorded AS (
        INSERT INTO ${s}.ledger_keys (key, kind, ref, outcome) SELECT key, kind, ref, outcome FROM mine RETURNING 1),
      put AS (
        INSERT INTO ${s}.ledger_docs (kind, ref, doc)
        SELECT p.kind, p.ref, p.doc FROM unnest($20::int[], $21::text[], $22::text[], $23::text[]) AS p(i, kind, ref, doc)
        JOIN mine ON mine.i = p.i
        ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc, version = ${s}.ledger_docs.version + 1 RETURNING 1)
      SELECT i, true AS written FROM changed
      UNION ALL SELECT x.i, false FROM x WHERE NOT EXISTS (SELECT 1 FROM locked WHERE locked.i = x.i)`,
  }
}

type Doc = Record<string, unknown>
type Change = ReturnType<LedgerMutation<unknown>>

const parse = (text: string | null | undefined) => (text == null ? undefined : JSON.parse(text))

type Related = readonly { kind: string; ref: string }[]

/** What the ledger's steps share: the connection, its statements, and the tables made on first use. */
interface LedgerDb {
  connection: PostgresConnection
  /** Resolves once the ledger's tables exist (before any statement, and before a transaction takes a client). */
  ensureTables(): Promise<void>
  run<R extends pg.QueryResultRow>(
    name: keyof ReturnType<typeof ledgerStatements>,
    values: unknown[],
  ): Promise<pg.QueryResult<R>>
  /** The optimistic read of one mutation (batched with concurrent ones). */
  read(r: ReadRequest): Promise<ReadRow>
  /** The optimistic write of one mutation (batched): false if the document's version moved on. */
  write(w: WriteRequest): Promise<WriteResult>
  /**
   * applyClaiming's statement (batched): 'written' (claimed, changed and finished), or nothing written because the
   * documents were not as the mutation saw them ('stale') or the key exists ('taken').
   */
  claimWrite(w: ClaimWriteRequest): Promise<ClaimWriteResult>
  /**
   * The documents (JSON) this process last read or wrote, by docId, with the version where known: a guess that lets a
   * mutation skip its read. It is never trusted — the write applies only at that version and with the related
   * documents unchanged —, so a stale guess costs one more round trip (the retry reads) and nothing else.
   */
  known: Map<string, { doc: string; version: string | undefined }>
}

const KNOWN_MAX = 10_000
const docId = (kind: string, ref: string) => `${kind}\u0000${ref}`
function remember(db: LedgerDb, kind: string, ref: string, doc: string, version: string | undefined) {
  const id = docId(kind, ref)
  db.known.delete(id)
  db.known.set(id, { doc, version })
  // Oldest first (Map order): drop it.
  if (db.known.size > KNOWN_MAX) db.known.delete(db.known.keys().next().value as string)
}

/** After a write applied at `version`: the document as written (or as read, when the change kept it), one version on. */
function rememberWritten(
  db: LedgerDb,
  kind: string,
  ref: string,
  written: string | null,
  read: string,
  version: string,
) {
  remember(db, kind, ref, written ?? read, String(BigInt(version) + 1n))
}

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

/** The read, answered from known documents when all are known (the key's outcome is then checked by the write). */
function readFromKnown(db: LedgerDb, kind: string, ref: string, alsoRead: Related): ReadRow | undefined {
  const main = db.known.get(docId(kind, ref))
  if (main?.version === undefined) return undefined
  const related: string[] = []
  for (const d of alsoRead) {
    const r = db.known.get(docId(d.kind, d.ref))
    if (r === undefined) return undefined
    related.push(r.doc)
  }
  return { doc: main.doc, version: main.version, outcome: null, related }
}

interface ReadRequest {
  key: string
  kind: string
  ref: string
  alsoRead: Related
}
type ReadRow = { doc: string | null; version: string | null; outcome: string | null; related: (string | null)[] }

interface WriteRequest {
  key: string
  kind: string
  ref: string
  /** The new document (JSON), null to keep it. */
  doc: string | null
  /** The version the mutation read. */
  version: string
  /** The outcome to record (JSON), null to record none. */
  outcome: string | null
  put: readonly LedgerDoc[] | undefined
  /** The related documents (JSON, null where missing) as the mutation saw them: the write applies only if unchanged. */
  seen: readonly Seen[]
  /** The provider's claim of the key to finish with the change (ApplyOptions.finish). */
  finish: { owner: string; record: KeyFinish } | undefined
}

/** An applyClaiming's one statement: the write of a mutation made from known documents, and the key's claim. */
interface ClaimWriteRequest {
  claim: ClaimRequest
  kind: string
  ref: string
  doc: string | null
  version: string
  outcome: string
  put: readonly LedgerDoc[] | undefined
  seen: readonly Seen[]
  record: KeyFinish
}

type ClaimWriteResult = 'written' | 'stale' | 'taken'

/** What a write did: not applied (the document moved on), or applied, and whether it finished the key's claim. */
type WriteResult = false | { finished: boolean | undefined }

type Seen = { kind: string; ref: string; doc: string | null }

function ledgerDb(connection: PostgresConnection): LedgerDb {
  const sql = ledgerStatements(connection.schema)
  let ready: Promise<void> | undefined
  const ensureTables = () => {
    ready ??= runSchemaDdl(connection, ledgerSchemaSql(connection.schema)).catch((e: unknown) => {
      ready = undefined
      throw e
    })
    return ready
  }
  const run = async <R extends pg.QueryResultRow>(name: keyof typeof sql, values: unknown[]) => {
    await ensureTables()
    // The optimistic writes commit without waiting for the WAL flush: the caller's answer waits for a later
    // synchronous commit (the key's finish), which flushes them. See unflushedPoolSettings (postgres-connection.ts).
    // A write that finishes a key is the key's outcome: it waits for the flush like the keys store's finish.
    const pool = name === 'write' || name === 'writeMany' ? connection.unflushedPool : connection.pool
    return pool.query<R>({ name: `tollgate_ledger_${name}`, text: sql[name], values })
  }
  const readOne = async (r: ReadRequest) =>
    (await run<ReadRow>('read', [r.key, r.kind, r.ref, r.alsoRead.map((d) => d.kind), r.alsoRead.map((d) => d.ref)]))
      .rows[0] as ReadRow
  const read = statementBatcher<ReadRequest, ReadRow>({
    runOne: readOne,
    maxInFlight: BATCHES_IN_FLIGHT,
    runBatch: async (rs) => {
      const related = rs.flatMap((r, i) => r.alsoRead.map((d) => ({ i, ...d })))
      const got = await run<ReadRow & { i: number }>('readMany', [
        rs.map((_, i) => i),
        rs.map((r) => r.key),
        rs.map((r) => r.kind),
        rs.map((r) => r.ref),
        related.map((d) => d.i),
        related.map((d) => d.kind),
        related.map((d) => d.ref),
      ])
      const byItem = new Map(got.rows.map((row) => [row.i, row]))
      return rs.map((_, i) => byItem.get(i))
    },
  })
  const writeMany = async (ws: readonly WriteRequest[]): Promise<WriteResult[]> => {
    const finishing = ws.flatMap((w, i) => (w.finish === undefined ? [] : [{ i, ...w.finish }]))
    const values = [
      ws.map((_, i) => i),
      ws.map((w) => w.key),
      ws.map((w) => w.kind),
      ws.map((w) => w.ref),
      ws.map((w) => w.doc),
      ws.map((w) => w.version),
      ws.map((w) => w.outcome),
      ...putColumns(ws),
      ...seenColumns(ws),
    ]
    if (finishing.length === 0) {
      const changed = await run<{ i: number }>('writeMany', values)
      const applied = new Set(changed.rows.map((row) => row.i))
      return ws.map((_, i) => (applied.has(i) ? { finished: undefined } : false))
    }
    const changed = await run<{ i: number; finished: boolean }>('writeFinishMany', [
      ...values,
      // $16–$21: one entry per item that finishes its key's claim.
      finishing.map((f) => f.i),
      finishing.map((f) => f.owner),
      ...keyRecordColumns(finishing.map((f) => f.record)),
    ])
    const finished = new Map(changed.rows.map((row) => [row.i, row.finished]))
    return ws.map((w, i) => {
      const f = finished.get(i)
      return f === undefined ? false : { finished: w.finish === undefined ? undefined : f }
    })
  }
  const writeOne = async (w: WriteRequest): Promise<WriteResult> => {
    if (w.finish !== undefined) return (await writeMany([w]))[0] as WriteResult
    const seen = [w.seen.map((d) => d.kind), w.seen.map((d) => d.ref), w.seen.map((d) => d.doc)]
    const values = [w.key, w.kind, w.ref, w.doc, w.version, w.outcome, ...putArrays(w.put), ...seen]
    return (await run<{ n: number }>('write', values)).rows[0]?.n === 1 ? { finished: undefined } : false
  }
  const write = statementBatcher<WriteRequest, WriteResult>({
    rowOf: (w) => `${w.kind}\u0000${w.ref}`,
    maxInFlight: BATCHES_IN_FLIGHT,
    runOne: writeOne,
    runBatch: writeMany,
  })
  const claimWriteMany = async (ws: readonly ClaimWriteRequest[]): Promise<ClaimWriteResult[]> => {
    const done = await run<{ i: number; written: boolean }>('claimWriteMany', [
      ws.map((_, i) => i),
      ws.map((w) => w.claim.key),
      ws.map((w) => w.kind),
      ws.map((w) => w.ref),
      ws.map((w) => w.doc),
      ws.map((w) => w.version),
      ws.map((w) => w.outcome),
      ws.map((w) => w.claim.fingerprint),
      ws.map((w) => w.claim.operation),
      ws.map((w) => w.claim.targetRef),
      ws.map((w) => w.claim.owner),
      ...keyRecordColumns(ws.map((w) => w.record)),
      ...seenColumns(ws),
      ...putColumns(ws),
    ])
    const answered = new Map(done.rows.map((row) => [row.i, row.written ? 'written' : 'stale'] as const))
    return ws.map((_, i) => answered.get(i) ?? 'taken')
  }
  const claimWrite = statementBatcher<ClaimWriteRequest, ClaimWriteResult>({
    rowOf: (w) => `${w.kind}\u0000${w.ref}`,
    maxInFlight: BATCHES_IN_FLIGHT,
    runOne: async (w) => (await claimWriteMany([w]))[0] as ClaimWriteResult,
    runBatch: claimWriteMany,
  })
  return { connection, ensureTables, run, read, write, claimWrite, known: new Map() }
}

/** The documents a batch's mutations put, as array columns (item index, kind, ref, JSON). */
function putColumns(ws: readonly { put: readonly LedgerDoc[] | undefined }[]): unknown[][] {
  const puts = ws.flatMap((w, i) => (w.put ?? []).map((d) => ({ i, ...d })))
  return [puts.map((d) => d.i), puts.map((d) => d.kind), puts.map((d) => d.ref), puts.map((d) => JSON.stringify(d.doc))]
}

/** The related documents a batch's mutations saw, as array columns (item index, kind, ref, JSON or null). */
function seenColumns(ws: readonly { seen: readonly Seen[] }[]): unknown[][] {
  const seen = ws.flatMap((w, i) => w.seen.map((d) => ({ i, ...d })))
  return [seen.map((d) => d.i), seen.map((d) => d.kind), seen.map((d) => d.ref), seen.map((d) => d.doc)]
}

const putArrays = (put: readonly LedgerDoc[] | undefined) => {
  const docs = put ?? []
  return [docs.map((d) => d.kind), docs.map((d) => d.ref), docs.map((d) => JSON.stringify(d.doc))]
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
  const [kinds, refs, docs] = putArrays(change.put)
  if ((kinds as string[]).length > 0) {
    await c.query(
      `INSERT INTO ${s}.ledger_docs (kind, ref, doc) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
       ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc, version = ${s}.ledger_docs.version + 1`,
      [kinds, refs, docs],
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
    seed: (docs) => guard(async () => void (await db.run('seed', putArrays(docs)))),
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
