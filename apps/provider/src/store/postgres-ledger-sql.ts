// The demo ledger's PostgreSQL statements and the requests they carry: each statement's text and, for the batched
// ones, its parameters (postgres-columns.ts), so a statement's field order is written once. The writes that claim or
// finish a provider's key use the key store's own INSERT and UPDATE (postgres-operations-sql.ts).
import type { LedgerDoc } from './ledger-store.js'
import { ArrayParameters, arrayGroup, type Columns } from './postgres-columns.js'
import { jsonbToText } from './postgres-connection.js'
import { claimColumns, finishColumns, finishOperations, insertOperations } from './postgres-operations-sql.js'
import type { ClaimRequest, KeyFinish } from './store.js'

export type Related = readonly { kind: string; ref: string }[]

/** A related document (JSON, null where missing) as a mutation saw it: the write applies only if it is unchanged. */
export type Seen = { kind: string; ref: string; doc: string | null }

export interface ReadRequest {
  key: string
  kind: string
  ref: string
  alsoRead: Related
}

export type ReadRow = { doc: string | null; version: string | null; outcome: string | null; related: (string | null)[] }

export interface WriteRequest {
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
  seen: readonly Seen[]
  /** The provider's claim of the key to finish with the change (ApplyOptions.finish). */
  finish: { owner: string; record: KeyFinish } | undefined
}

/** An applyClaiming's one statement: the write of a mutation made from known documents, and the key's claim. */
export interface ClaimWriteRequest {
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

// TEXT, not JSONB: documents and outcomes come back with their keys in the order they were written.
export function ledgerSchemaSql(s: string): string {
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

/** Where a document is: its kind and ref. */
const DOC_ID: Columns<{ kind: string; ref: string }> = { kind: ['text', (d) => d.kind], ref: ['text', (d) => d.ref] }
const DOC: Columns<LedgerDoc> = { ...DOC_ID, doc: ['text', (d) => JSON.stringify(d.doc)] }
const SEEN: Columns<Seen> = { ...DOC_ID, doc: ['text', (d) => d.doc] }
/** The batch item a flattened row belongs to. */
const ITEM: Columns<{ i: number }> = { i: ['int', (r) => r.i] }
/** A request's place in its batch (its item). */
const BATCH_ITEM: Columns<unknown> = { i: ['int', (_, i) => i] }

type Flattened<T> = T & { i: number }

/** The documents a batch's mutations put, each with its item. */
const putGroup = <W extends { put: readonly LedgerDoc[] | undefined }>() =>
  arrayGroup<readonly W[], Flattened<LedgerDoc>>('p', { ...ITEM, ...DOC }, (ws) =>
    ws.flatMap((w, i) => (w.put ?? []).map((d) => ({ i, ...d }))),
  )
/** The related documents a batch's mutations saw, each with its item. */
const seenGroup = <W extends { seen: readonly Seen[] }>() =>
  arrayGroup<readonly W[], Flattened<Seen>>('seen', { ...ITEM, ...SEEN }, (ws) =>
    ws.flatMap((w, i) => w.seen.map((d) => ({ i, ...d }))),
  )

const CHANGE: Columns<WriteRequest> = {
  ...BATCH_ITEM,
  key: ['text', (w) => w.key],
  kind: ['text', (w) => w.kind],
  ref: ['text', (w) => w.ref],
  doc: ['text', (w) => w.doc],
  version: ['bigint', (w) => w.version],
  outcome: ['text', (w) => w.outcome],
}
type Finishing = { i: number; owner: string; record: KeyFinish }
const FINISHING: Columns<Finishing> = {
  ...ITEM,
  owner: ['text', (f) => f.owner],
  ...finishColumns((f: Finishing) => f.record),
}
const CLAIM_WRITE: Columns<ClaimWriteRequest> = {
  ...BATCH_ITEM,
  ...claimColumns((w: ClaimWriteRequest) => w.claim),
  kind: ['text', (w) => w.kind],
  ref: ['text', (w) => w.ref],
  doc: ['text', (w) => w.doc],
  version: ['bigint', (w) => w.version],
  outcome: ['text', (w) => w.outcome],
  ...finishColumns((w: ClaimWriteRequest) => w.record),
}

/** Each statement's parameters (the scalar ones, $1…, are in the statement's own call). */
export const ledgerParameters = {
  // seed, and the locked path's puts.
  docs: new ArrayParameters<readonly LedgerDoc[]>([arrayGroup('d', DOC, (docs: readonly LedgerDoc[]) => docs)]),
  // After the key, kind and ref ($1–$3).
  read: new ArrayParameters<ReadRequest>(
    [arrayGroup<ReadRequest, { kind: string; ref: string }>('x', DOC_ID, (r) => r.alsoRead)],
    4,
  ),
  readMany: new ArrayParameters<readonly ReadRequest[]>([
    arrayGroup<readonly ReadRequest[], ReadRequest>(
      'x',
      { ...BATCH_ITEM, key: ['text', (r) => r.key], ...DOC_ID },
      (rs) => rs,
    ),
    arrayGroup<readonly ReadRequest[], Flattened<{ kind: string; ref: string }>>('y', { ...ITEM, ...DOC_ID }, (rs) =>
      rs.flatMap((r, i) => r.alsoRead.map((d) => ({ i, ...d }))),
    ),
  ]),
  // After the key, kind, ref, document, version and outcome ($1–$6).
  write: new ArrayParameters<WriteRequest>(
    [arrayGroup('p', DOC, (w: WriteRequest) => w.put ?? []), arrayGroup('seen', SEEN, (w: WriteRequest) => w.seen)],
    7,
  ),
  writeMany: new ArrayParameters<readonly WriteRequest[]>([
    arrayGroup('x', CHANGE, (ws: readonly WriteRequest[]) => ws),
    putGroup<WriteRequest>(),
    seenGroup<WriteRequest>(),
  ]),
  writeFinishMany: new ArrayParameters<readonly WriteRequest[]>([
    arrayGroup('x', CHANGE, (ws: readonly WriteRequest[]) => ws),
    putGroup<WriteRequest>(),
    seenGroup<WriteRequest>(),
    arrayGroup('f', FINISHING, (ws: readonly WriteRequest[]) =>
      ws.flatMap((w, i) => (w.finish === undefined ? [] : [{ i, ...w.finish }])),
    ),
  ]),
  claimWriteMany: new ArrayParameters<readonly ClaimWriteRequest[]>([
    arrayGroup('x', CLAIM_WRITE, (ws: readonly ClaimWriteRequest[]) => ws),
    putGroup<ClaimWriteRequest>(),
    seenGroup<ClaimWriteRequest>(),
  ]),
}

export type LedgerStatementName = keyof ReturnType<typeof ledgerStatements>

/** The named statements (each pooled connection parses one once and then only binds it). */
export function ledgerStatements(s: string) {
  return { ...readStatements(s), ...writeStatements(s), claimWriteMany: claimWriteManySql(s) }
}

function readStatements(s: string) {
  const p = ledgerParameters
  return {
    seed: `INSERT INTO ${s}.ledger_docs (kind, ref, doc) SELECT d.kind, d.ref, d.doc FROM ${p.docs.unnest('d')}
      ON CONFLICT DO NOTHING`,
    get: `SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 AND ref = $2`,
    list: `SELECT doc FROM ${s}.ledger_docs WHERE kind = $1 ORDER BY ref`,
    getWithList: `SELECT d.doc, ARRAY(SELECT r.doc FROM ${s}.ledger_docs r WHERE r.kind = $3 ORDER BY r.ref) AS list
      FROM (SELECT 1) AS one LEFT JOIN ${s}.ledger_docs d ON d.kind = $1 AND d.ref = $2`,
    lookup: `SELECT outcome FROM ${s}.ledger_keys WHERE key = $1`,
    // The key's outcome, the document (with its version) and the related documents in one round trip.
    read: `SELECT d.doc, d.version, k.outcome,
        ARRAY(SELECT r.doc FROM ${p.read.unnest('x', 'i')}
              LEFT JOIN ${s}.ledger_docs r ON r.kind = x.kind AND r.ref = x.ref ORDER BY x.i) AS related
      FROM (SELECT 1) AS one
      LEFT JOIN ${s}.ledger_docs d ON d.kind = $2 AND d.ref = $3
      LEFT JOIN ${s}.ledger_keys k ON k.key = $1`,
    // read for many mutations: one row per mutation (x.i), its related documents from the flattened y.
    readMany: `SELECT x.i, d.doc, d.version, k.outcome,
        ARRAY(SELECT r.doc FROM ${p.readMany.unnest('y', 'o')}
              LEFT JOIN ${s}.ledger_docs r ON r.kind = y.kind AND r.ref = y.ref WHERE y.i = x.i ORDER BY y.o) AS related
      FROM ${p.readMany.unnest('x')}
      LEFT JOIN ${s}.ledger_docs d ON d.kind = x.kind AND d.ref = x.ref
      LEFT JOIN ${s}.ledger_keys k ON k.key = x.key`,
  }
}

function writeStatements(s: string) {
  const p = ledgerParameters.writeFinishMany
  // writeMany's changes, which writeFinishMany makes too (its first parameters are writeMany's): the documents still
  // at the version their mutations saw (and whose related documents are unchanged), the keys' ledger outcomes, the
  // documents they put.
  const changesMany = `x AS (SELECT * FROM ${p.unnest('x')}),
      changed AS (
        UPDATE ${s}.ledger_docs d SET doc = COALESCE(x.doc, d.doc), version = d.version + 1
        FROM x WHERE d.kind = x.kind AND d.ref = x.ref AND d.version = x.version
          AND NOT EXISTS (
            SELECT 1 FROM ${p.unnest('seen')}
            LEFT JOIN ${s}.ledger_docs r ON r.kind = seen.kind AND r.ref = seen.ref
            WHERE seen.i = x.i AND r.doc IS DISTINCT FROM seen.doc)
        RETURNING x.i, x.key, x.kind, x.ref, x.outcome),
      recorded AS (
        INSERT INTO ${s}.ledger_keys (key, kind, ref, outcome)
        SELECT key, kind, ref, outcome FROM changed WHERE outcome IS NOT NULL RETURNING 1),
      put AS (
        INSERT INTO ${s}.ledger_docs (kind, ref, doc)
        SELECT p.kind, p.ref, p.doc FROM ${p.unnest('p')}
        JOIN changed ON changed.i = p.i
        ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc, version = ${s}.ledger_docs.version + 1 RETURNING 1)`
  const one = ledgerParameters.write
  return {
    // Applies only at the version read and if the related documents are still as the mutation saw them; then
    // records the key and puts the extra documents, all in one statement.
    write: `WITH changed AS (
        UPDATE ${s}.ledger_docs SET doc = COALESCE($4::text, doc), version = version + 1
        WHERE kind = $2 AND ref = $3 AND version = $5
          AND NOT EXISTS (SELECT 1 FROM ${one.unnest('seen')}
            LEFT JOIN ${s}.ledger_docs r ON r.kind = seen.kind AND r.ref = seen.ref WHERE r.doc IS DISTINCT FROM seen.doc)
        RETURNING 1),
      recorded AS (
        INSERT INTO ${s}.ledger_keys (key, kind, ref, outcome)
        SELECT $1, $2, $3, $6::text FROM changed WHERE $6::text IS NOT NULL RETURNING 1),
      put AS (
        INSERT INTO ${s}.ledger_docs (kind, ref, doc)
        SELECT p.kind, p.ref, p.doc FROM changed, ${one.unnest('p')}
        ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc, version = ${s}.ledger_docs.version + 1 RETURNING 1)
      SELECT (SELECT count(*) FROM changed)::int AS n`,
    // write for many mutations of distinct documents: the ones (x.i) whose version still matched.
    writeMany: `WITH ${changesMany}
      SELECT i FROM changed`,
    // writeMany that also finishes the provider's claims of the changed keys (f: one entry per item that finishes):
    // the keys store's finish, applied only where the change applied and the claim is still the owner's, so a change
    // and its key's outcome commit together. Answers each changed item and whether its claim finished.
    writeFinishMany: `WITH ${changesMany},
      finished AS (
        ${finishOperations(s, `changed JOIN ${p.unnest('f')} ON f.i = changed.i`, 'changed.key')}
        RETURNING f.i)
      SELECT changed.i, finished.i IS NOT NULL AS finished FROM changed LEFT JOIN finished ON finished.i = changed.i`,
  }
}

/**
 * New keys claimed, changed and finished in one statement (DemoLedgerStore.applyClaiming). An item goes through only
 * if its document is still at the version the mutation saw (row-locked here, so it stays there), its related
 * documents are unchanged and the ledger has no outcome for its key (locked), and its key's row could be inserted,
 * already final (claimed: the key store's INSERT). The change, the ledger's outcome and the rows it puts follow only
 * for the items this statement inserted (mine: key and owner, so a key sent twice in one batch is written once).
 * Answers those items (written) and the ones whose document, related documents or ledger key failed the checks (not
 * written: stale).
 */
function claimWriteManySql(s: string): string {
  const p = ledgerParameters.claimWriteMany
  return `WITH x AS (SELECT * FROM ${p.unnest('x')}),
      locked AS (
        SELECT x.i FROM x JOIN ${s}.ledger_docs d ON d.kind = x.kind AND d.ref = x.ref AND d.version = x.version
        WHERE NOT EXISTS (SELECT 1 FROM ${s}.ledger_keys k WHERE k.key = x.key)
          AND NOT EXISTS (
            SELECT 1 FROM ${p.unnest('seen')}
            LEFT JOIN ${s}.ledger_docs r ON r.kind = seen.kind AND r.ref = seen.ref
            WHERE seen.i = x.i AND r.doc IS DISTINCT FROM seen.doc)
        FOR UPDATE OF d),
      claimed AS (
        ${insertOperations(s, 'x JOIN locked ON locked.i = x.i', { lease_until: '0' })}
        RETURNING key, owner),
      mine AS (SELECT x.* FROM x JOIN claimed ON claimed.key = x.key AND claimed.owner = x.owner),
      changed AS (
        UPDATE ${s}.ledger_docs d SET doc = COALESCE(mine.doc, d.doc), version = d.version + 1
        FROM mine WHERE d.kind = mine.kind AND d.ref = mine.ref RETURNING mine.i),
      recorded AS (
        INSERT INTO ${s}.ledger_keys (key, kind, ref, outcome) SELECT key, kind, ref, outcome FROM mine RETURNING 1),
      put AS (
        INSERT INTO ${s}.ledger_docs (kind, ref, doc)
        SELECT p.kind, p.ref, p.doc FROM ${p.unnest('p')}
        JOIN mine ON mine.i = p.i
        ON CONFLICT (kind, ref) DO UPDATE SET doc = excluded.doc, version = ${s}.ledger_docs.version + 1 RETURNING 1)
      SELECT i, true AS written FROM changed
      UNION ALL SELECT x.i, false FROM x WHERE NOT EXISTS (SELECT 1 FROM locked WHERE locked.i = x.i)`
}
