// What the demo ledger's PostgreSQL steps share: its statements run on the keys store's pools, group-committed
// (postgres-batch.ts), and the documents this process last read or wrote.
import { LRUCache } from 'lru-cache'
import type pg from 'pg'
import { statementBatcher } from './postgres-batch.js'
import { BATCHES_IN_FLIGHT, type PostgresConnection, runSchemaDdl } from './postgres-connection.js'
import {
  type ClaimWriteRequest,
  type LedgerStatementName,
  ledgerParameters,
  ledgerSchemaSql,
  ledgerStatements,
  type ReadRequest,
  type ReadRow,
  type Related,
  type WriteRequest,
} from './postgres-ledger-sql.js'

export type ClaimWriteResult = 'written' | 'stale' | 'taken'

/** What a write did: not applied (the document moved on), or applied, and whether it finished the key's claim. */
export type WriteResult = false | { finished: boolean | undefined }

/** A document as this process last read or wrote it (JSON), with its version where known. */
export interface KnownDoc {
  doc: string
  version: string | undefined
}

export interface LedgerDb {
  connection: PostgresConnection
  /** Resolves once the ledger's tables exist (before any statement, and before a transaction takes a client). */
  ensureTables(): Promise<void>
  run<R extends pg.QueryResultRow>(name: LedgerStatementName, values: unknown[]): Promise<pg.QueryResult<R>>
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
  known: LRUCache<string, KnownDoc>
}

const KNOWN_MAX = 10_000
// Passed to the cache's set and peek: their default parameter would make a new options object on every refund.
const NO_OPTIONS = Object.freeze({})

export const docId = (kind: string, ref: string) => `${kind}\u0000${ref}`

/** Remembers a document as read or written (the most recently remembered are kept). */
export function remember(db: LedgerDb, kind: string, ref: string, doc: string, version: string | undefined) {
  db.known.set(docId(kind, ref), { doc, version }, NO_OPTIONS)
}

/** After a write applied at `version`: the document as written (or as read, when the change kept it), one version on. */
export function rememberWritten(
  db: LedgerDb,
  kind: string,
  ref: string,
  written: string | null,
  read: string,
  version: string,
) {
  remember(db, kind, ref, written ?? read, String(BigInt(version) + 1n))
}

/** The read, answered from known documents when all are known (the key's outcome is then checked by the write). */
export function readFromKnown(db: LedgerDb, kind: string, ref: string, alsoRead: Related): ReadRow | undefined {
  const main = db.known.peek(docId(kind, ref), NO_OPTIONS)
  if (main?.version === undefined) return undefined
  const related: string[] = []
  for (const d of alsoRead) {
    const r = db.known.peek(docId(d.kind, d.ref), NO_OPTIONS)
    if (r === undefined) return undefined
    related.push(r.doc)
  }
  return { doc: main.doc, version: main.version, outcome: null, related }
}

export function ledgerDb(connection: PostgresConnection): LedgerDb {
  const sql = ledgerStatements(connection.schema)
  let ready: Promise<void> | undefined
  const ensureTables = () => {
    ready ??= runSchemaDdl(connection, ledgerSchemaSql(connection.schema)).catch((e: unknown) => {
      ready = undefined
      throw e
    })
    return ready
  }
  const run = async <R extends pg.QueryResultRow>(name: LedgerStatementName, values: unknown[]) => {
    await ensureTables()
    // The optimistic writes commit without waiting for the WAL flush: the caller's answer waits for a later
    // synchronous commit (the key's finish), which flushes them. See unflushedPoolSettings (postgres-connection.ts).
    // A write that finishes a key is the key's outcome: it waits for the flush like the keys store's finish.
    const pool = name === 'write' || name === 'writeMany' ? connection.unflushedPool : connection.pool
    return pool.query<R>({ name: `tollgate_ledger_${name}`, text: sql[name], values })
  }
  return {
    connection,
    ensureTables,
    run,
    read: reads(run),
    write: writes(run),
    claimWrite: claimWrites(run),
    known: new LRUCache<string, KnownDoc>({ max: KNOWN_MAX }),
  }
}

type Run = LedgerDb['run']
const rowOfDoc = (w: { kind: string; ref: string }) => docId(w.kind, w.ref)

function reads(run: Run): LedgerDb['read'] {
  const p = ledgerParameters
  return statementBatcher<ReadRequest, ReadRow>({
    runOne: async (r) => (await run<ReadRow>('read', [r.key, r.kind, r.ref, ...p.read.values(r)])).rows[0] as ReadRow,
    maxInFlight: BATCHES_IN_FLIGHT,
    runBatch: async (rs) => {
      const got = await run<ReadRow & { i: number }>('readMany', p.readMany.values(rs))
      const byItem = new Map(got.rows.map((row) => [row.i, row]))
      return rs.map((_, i) => byItem.get(i))
    },
  })
}

function writes(run: Run): LedgerDb['write'] {
  const p = ledgerParameters
  const writeMany = async (ws: readonly WriteRequest[]): Promise<WriteResult[]> => {
    if (ws.every((w) => w.finish === undefined)) {
      const changed = await run<{ i: number }>('writeMany', p.writeMany.values(ws))
      const applied = new Set(changed.rows.map((row) => row.i))
      return ws.map((_, i) => (applied.has(i) ? { finished: undefined } : false))
    }
    const changed = await run<{ i: number; finished: boolean }>('writeFinishMany', p.writeFinishMany.values(ws))
    const finished = new Map(changed.rows.map((row) => [row.i, row.finished]))
    return ws.map((w, i) => {
      const f = finished.get(i)
      return f === undefined ? false : { finished: w.finish === undefined ? undefined : f }
    })
  }
  const writeOne = async (w: WriteRequest): Promise<WriteResult> => {
    if (w.finish !== undefined) return (await writeMany([w]))[0] as WriteResult
    const values = [w.key, w.kind, w.ref, w.doc, w.version, w.outcome, ...p.write.values(w)]
    return (await run<{ n: number }>('write', values)).rows[0]?.n === 1 ? { finished: undefined } : false
  }
  return statementBatcher<WriteRequest, WriteResult>({
    rowOf: rowOfDoc,
    maxInFlight: BATCHES_IN_FLIGHT,
    runOne: writeOne,
    runBatch: writeMany,
  })
}

function claimWrites(run: Run): LedgerDb['claimWrite'] {
  const claimWriteMany = async (ws: readonly ClaimWriteRequest[]): Promise<ClaimWriteResult[]> => {
    const done = await run<{ i: number; written: boolean }>(
      'claimWriteMany',
      ledgerParameters.claimWriteMany.values(ws),
    )
    const answered = new Map(done.rows.map((row) => [row.i, row.written ? 'written' : 'stale'] as const))
    return ws.map((_, i) => answered.get(i) ?? 'taken')
  }
  return statementBatcher<ClaimWriteRequest, ClaimWriteResult>({
    rowOf: rowOfDoc,
    maxInFlight: BATCHES_IN_FLIGHT,
    runOne: async (w) => (await claimWriteMany([w]))[0] as ClaimWriteResult,
    runBatch: claimWriteMany,
  })
}
