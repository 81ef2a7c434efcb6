// Replicated store: PostgreSQL. The per-key claim is a row (INSERT … ON CONFLICT DO NOTHING) with a lease, so two
// replicas sharing the database never both run one key. Every write of a refund's path is one statement (data-
// modifying CTEs instead of BEGIN … COMMIT): one round trip and one commit each, and no pooled connection held
// across round trips. Claims and finishes are group-committed (postgres-batch.ts): concurrent calls share one such
// statement over unnest() arrays.
import type pg from 'pg'
import { StoreError } from '../errors.js'
import { attachLedgerStore } from './ledger-store.js'
import { statementBatcher } from './postgres-batch.js'
import { ArrayParameters, arrayGroup } from './postgres-columns.js'
import {
  BATCHES_IN_FLIGHT,
  connectPostgres,
  jsonbToText,
  longQuery,
  type PostgresConnection,
  type PostgresStoreOptions,
  runSchemaDdl,
} from './postgres-connection.js'
import { openPostgresLedgerStore } from './postgres-ledger-store.js'
import { claimColumns, finishColumns, finishOperations, insertOperations } from './postgres-operations-sql.js'
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

// result and refusal are TEXT, not JSONB: JSONB reorders an object's keys, and a replay must answer the bytes the
// first call answered. Tables made by earlier versions (JSONB) are converted in place.
// The finish's UPDATE changes no indexed column (purge uses created_at, not updated_at), so it can be a HOT update
// (no new index entries, the old version pruned within its page) if the page has room for the new version: fillfactor
// 70 leaves it (measured: 98% of finishes HOT, ~85% at 100; WAL per refund ~2 310 → ~2 110 B). Schemas made by
// earlier versions are migrated in place: the index swapped (CREATE INDEX blocks the table's writes while it
// builds, once), the fillfactor set (it applies to pages filled from then on).
const OPERATIONS_FILLFACTOR = 70
function keysSchemaSql(s: string): string {
  return `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.operations (
  key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, operation TEXT NOT NULL, target_ref TEXT NOT NULL,
  status TEXT NOT NULL, result TEXT, refusal TEXT, owner TEXT NOT NULL, lease_until BIGINT NOT NULL,
  created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL) WITH (fillfactor = ${OPERATIONS_FILLFACTOR});
CREATE INDEX IF NOT EXISTS operations_created ON ${s}.operations(created_at);
CREATE TABLE IF NOT EXISTS ${s}.readiness (id INT PRIMARY KEY CHECK (id = 1), checked_at BIGINT NOT NULL);
DROP INDEX IF EXISTS ${s}.operations_updated;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = '${s}' AND c.relname = 'operations'
                   AND 'fillfactor=${OPERATIONS_FILLFACTOR}' = ANY(c.reloptions)) THEN
    ALTER TABLE ${s}.operations SET (fillfactor = ${OPERATIONS_FILLFACTOR});
  END IF;
END $$;
${jsonbToText(s, 'operations', ['result', 'refusal'])}
`
}

export type { PostgresStoreOptions } from './postgres-connection.js'

/** Opens a PostgreSQL store, creating its schema and tables if needed. RangeError for bad options. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const connection = connectPostgres(options)
  try {
    await connection.guard(() => ensureKeysSchema(connection))
  } catch (error) {
    await connection.end().catch(() => {})
    throw new StoreError('cannot open the PostgreSQL store', { cause: (error as StoreError).cause ?? error })
  }
  const store = keysStore(connection)
  attachLedgerStore(store, () => openPostgresLedgerStore(connection))
  return store
}

const ensureKeysSchema = (c: PostgresConnection) => runSchemaDdl(c, keysSchemaSql(c.schema))

/** A finish: the key, its claim's owner, and what it recorded. */
interface Finish extends KeyFinish {
  key: string
  owner: string
}

// Many claims, many finishes: the columns their statements read, in their order.
const claimsMany = new ArrayParameters<readonly ClaimRequest[]>([
  arrayGroup(
    'x',
    {
      ...claimColumns((r: ClaimRequest) => r),
      lease_until: ['bigint', (r: ClaimRequest) => r.nowMs + r.leaseMs],
      at: ['bigint', (r: ClaimRequest) => r.nowMs],
    },
    (rs) => rs,
  ),
])
const finishesMany = new ArrayParameters<readonly Finish[]>([
  arrayGroup(
    'f',
    {
      key: ['text', (f: Finish) => f.key],
      owner: ['text', (f: Finish) => f.owner],
      ...finishColumns((f: Finish) => f),
    },
    (fs) => fs,
  ),
])

// Named statements: each pooled connection parses one once and then only binds it.
function keyStatements(s: string) {
  return {
    insert: `INSERT INTO ${s}.operations (key, fingerprint, operation, target_ref, status, owner, lease_until, created_at, updated_at)
      VALUES ($1, $2, $3, $4, 'running', $5, $6, $7, $7) ON CONFLICT (key) DO NOTHING`,
    takeover: `UPDATE ${s}.operations SET owner = $1, lease_until = $2, updated_at = $3
      WHERE key = $4 AND fingerprint = $5 AND status = 'running' AND lease_until <= $3`,
    // Many claims in one statement: the keys it inserted are claimed; the others take the one-key path.
    insertMany: `${insertOperations(s, claimsMany.unnest('x'), { status: "'running'", result: 'NULL', refusal: 'NULL' })}
      RETURNING key`,
    get: `SELECT * FROM ${s}.operations WHERE key = $1`,
    finish: `UPDATE ${s}.operations SET status = $1, result = $2, refusal = $3, updated_at = $4, lease_until = 0
      WHERE key = $5 AND owner = $6 AND status = 'running'`,
    // finish for many keys (distinct, so no row is updated twice): the keys it finished.
    finishMany: `${finishOperations(s, finishesMany.unnest('f'))} RETURNING o.key`,
    abandon: `UPDATE ${s}.operations SET lease_until = 0 WHERE key = $1 AND owner = $2 AND status = 'running'`,
    release: `DELETE FROM ${s}.operations WHERE key = $1 AND owner = $2 AND status = 'running'`,
    settle: `UPDATE ${s}.operations SET status = $1, result = $2, refusal = $3, updated_at = $4
      WHERE key = $5 AND status = 'pending'`,
    // created_at < $1 finds the candidates through the created_at index; a row changes after it is created
    // (updated_at ≥ created_at), so it adds no condition — with replicas' clocks apart, a row is only kept longer.
    purge: `DELETE FROM ${s}.operations WHERE status IN ('succeeded','failed') AND created_at < $1 AND updated_at < $1`,
    countPending: `SELECT count(*)::int AS n FROM ${s}.operations WHERE status = 'pending'`,
    // Readiness: one row, rewritten (replicas share it; one write a second each is nothing to contend on).
    probe: `INSERT INTO ${s}.readiness (id, checked_at) VALUES (1, $1)
      ON CONFLICT (id) DO UPDATE SET checked_at = EXCLUDED.checked_at`,
  }
}

function keysStore(connection: PostgresConnection): Store {
  const { guard } = connection
  const sql = keyStatements(connection.schema)
  // connection.pool is read at each call: the pools are replaced when the server turns read-only (recycle).
  const run = <R extends pg.QueryResultRow = Record<string, unknown>>(
    name: keyof typeof sql,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> => connection.pool.query<R>({ name: `tollgate_${name}`, text: sql[name], values })
  // A claim's INSERT commits without waiting for the WAL flush: see unflushedPoolSettings (postgres-connection.ts).
  const insertClaims = <R extends pg.QueryResultRow>(name: 'insert' | 'insertMany', values: unknown[]) =>
    connection.unflushedPool.query<R>({ name: `tollgate_${name}`, text: sql[name], values })

  // One key, alone: INSERT, else take over an expired lease, else report the row.
  const claimOne = async (r: ClaimRequest): Promise<ClaimResult> => {
    const at = r.nowMs
    const ins = await insertClaims('insert', [
      r.key,
      r.fingerprint,
      r.operation,
      r.targetRef,
      r.owner,
      at + r.leaseMs,
      at,
    ])
    if (ins.rowCount === 1) return { kind: 'claimed', recovering: false }
    const taken = await run('takeover', [r.owner, at + r.leaseMs, at, r.key, r.fingerprint])
    if (taken.rowCount === 1) return { kind: 'claimed', recovering: true }
    const row = (await run<OperationsRow>('get', [r.key])).rows[0]
    // Released between our INSERT and SELECT: try again from the top.
    if (row === undefined) return claimOne(r)
    return { kind: 'exists', row: toOperation(row) }
  }
  const claim = statementBatcher<ClaimRequest, ClaimResult>({
    rowOf: (r) => r.key,
    maxInFlight: BATCHES_IN_FLIGHT,
    runOne: claimOne,
    runBatch: async (rs) => {
      const inserted = await insertClaims<{ key: string }>('insertMany', claimsMany.values(rs))
      const claimed = new Set(inserted.rows.map((row) => row.key))
      // A key that exists already (a replay, a takeover, a race) takes the one-key path.
      return rs.map((r) => (claimed.has(r.key) ? { kind: 'claimed', recovering: false } : undefined))
    },
  })

  const finishOne = async ({ key, owner, outcome, nowMs }: Finish) =>
    (await run('finish', [...outcomeValues(outcome, nowMs), key, owner])).rowCount === 1
  const finish = statementBatcher<Finish, boolean>({
    rowOf: (f) => f.key,
    maxInFlight: BATCHES_IN_FLIGHT,
    runOne: finishOne,
    runBatch: async (fs) => {
      const done = await run<{ key: string }>('finishMany', finishesMany.values(fs))
      const finished = new Set(done.rows.map((row) => row.key))
      return fs.map((f) => finished.has(f.key))
    },
  })

  const outcomeValues = (o: Outcome, nowMs: number) => [o.status, jsonOrNull(o.result), jsonOrNull(o.refusal), nowMs]

  return {
    kind: 'postgres',
    claim: (r) => guard(() => claim(r)),
    finish: (key, owner, outcome, nowMs) => guard(() => finish({ key, owner, outcome, nowMs })),
    abandon: (key, owner) => guard(async () => void (await run('abandon', [key, owner]))),
    release: (key, owner) => guard(async () => void (await run('release', [key, owner]))),
    settle: (key, o, nowMs) =>
      guard(async () => (await run('settle', [...outcomeValues(o, nowMs), key])).rowCount === 1),
    // Reads: their success does not end a read-only outage (StoreHealth.succeeded).
    get: (key) =>
      guard(async () => {
        const row = (await run<OperationsRow>('get', [key])).rows[0]
        return row === undefined ? undefined : toOperation(row)
      }, 'read'),
    purge: (cutoffMs) =>
      guard(
        async () =>
          (await connection.pool.query(longQuery({ name: 'tollgate_purge', text: sql.purge, values: [cutoffMs] })))
            .rowCount ?? 0,
      ),
    countPending: () => guard(async () => (await run<{ n: number }>('countPending', [])).rows[0]?.n ?? 0, 'read'),
    probe: () => guard(async () => void (await run('probe', [Date.now()]))),
    onOutage: (listener) => connection.health.onDown(listener),
    close: () => guard(() => connection.end()),
  }
}
