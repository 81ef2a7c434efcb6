// The PostgreSQL keys store's schema and plans: purge finds its rows through operations(created_at) and still removes
// exactly the final rows last changed before the cutoff; a finish is a HOT update (it changes no indexed column); a
// schema made by an earlier version (operations_updated index, default fillfactor) is migrated in place at open; and
// batched statements probe by index even after their plans are cached on a table the planner thought small.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { demoLedgerStore, openPostgresStore, purgeExpired } from '../src/index.js'
import { PgSessionStore } from '../src/store/pg-session-store.js'
import { connectPostgres } from '../src/store/postgres-connection.js'
import { dropSchemas, PG_URL, probePostgres, uniqueSchema } from './postgres.js'

const pgSkip = await probePostgres()

test('a connection string that does not parse is a RangeError that does not carry it (it may hold a password)', async () => {
  const connectionString = 'postgres://u:secretpw@db.example:notaport/db'
  const clean = (error: unknown) =>
    error instanceof RangeError &&
    error.message === 'connectionString is not a valid postgres:// URL' &&
    error.cause === undefined &&
    !JSON.stringify(Object.entries(error)).includes('secretpw')
  assert.throws(() => connectPostgres({ connectionString }), clean)
  // The 2025-era session store's own pool too (startProvider opens the keys store first, which refuses it already).
  await assert.rejects(PgSessionStore.open({ connectionString }), clean)
})
const DAY = 86_400_000

const claimOf = (key: string, nowMs: number) => ({
  key,
  fingerprint: 'fp',
  operation: 'refund' as const,
  targetRef: 'ch_1',
  owner: 'o',
  nowMs,
  leaseMs: 60_000,
})
const outcome = (status: 'succeeded' | 'failed' | 'pending') => ({ status, result: { status }, refusal: null })
interface TableStats {
  seq_scan: number
  seq_tup_read: number
  n_tup_upd: number
  n_tup_hot_upd: number
}

/**
 * A table's counters once the store's connections are closed (a backend reports its counters when it exits), waiting
 * until n_tup_upd reaches minUpdates.
 */
async function statsOf(admin: pg.Client, schema: string, table: string, minUpdates = 0): Promise<TableStats> {
  for (let i = 0; ; i++) {
    await admin.query('SELECT pg_stat_clear_snapshot()')
    const row = (
      await admin.query<TableStats>(
        `SELECT seq_scan::int, seq_tup_read::int, n_tup_upd::int, n_tup_hot_upd::int FROM pg_stat_user_tables
         WHERE schemaname = $1 AND relname = $2`,
        [schema, table],
      )
    ).rows[0] as TableStats
    if (row.n_tup_upd >= minUpdates || i >= 50) return row
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('the PostgreSQL keys schema', { skip: pgSkip }, () => {
  let admin: pg.Client
  const schemas: string[] = []
  const fresh = (label: string) => {
    const s = uniqueSchema(label)
    schemas.push(s)
    return s
  }
  before(async () => {
    admin = new pg.Client({ connectionString: PG_URL })
    await admin.connect()
  })
  after(async () => {
    await admin?.end()
    await dropSchemas(...schemas)
  })

  test('purge removes exactly the final rows last changed before the cutoff', async () => {
    const schema = fresh('purge')
    const store = await openPostgresStore({ connectionString: PG_URL, schema })
    try {
      const now = 100 * DAY
      const old = now - 31 * DAY
      const recent = now - 29 * DAY
      // [key, claimed at, finished at (undefined: still running), status]
      const rows: [string, number, number | undefined, 'succeeded' | 'failed' | 'pending'][] = [
        ['old-succeeded', old, old, 'succeeded'],
        ['old-failed', old - DAY, old, 'failed'],
        // Created before the cutoff, last changed after it: kept (the created_at index alone would find it).
        ['old-finished-recently', old, recent, 'succeeded'],
        ['recent', recent, recent, 'succeeded'],
        ['old-pending', old, old, 'pending'],
        ['old-running', old, undefined, 'succeeded'],
      ]
      for (const [key, claimedAt, finishedAt, status] of rows) {
        assert.deepEqual(await store.claim(claimOf(key, claimedAt)), { kind: 'claimed', recovering: false })
        if (finishedAt !== undefined) {
          assert.equal(await store.finish(key, 'o', outcome(status), finishedAt), true)
        }
      }
      assert.equal(await purgeExpired(store, 30, now), 2)
      for (const [key] of rows) {
        const gone = key === 'old-succeeded' || key === 'old-failed'
        assert.equal((await store.get(key)) === undefined, gone, key)
      }
      // Nothing left to purge at the same cutoff.
      assert.equal(await purgeExpired(store, 30, now), 0)
    } finally {
      await store.close()
    }
  })

  test('a finish changes no indexed column: it is a HOT update (no new index entries)', async () => {
    const schema = fresh('hot')
    const store = await openPostgresStore({ connectionString: PG_URL, schema })
    const keys = Array.from({ length: 20 }, (_, i) => `hot-${i}`)
    try {
      for (const key of keys) await store.claim(claimOf(key, 1000))
      for (const key of keys) assert.equal(await store.finish(key, 'o', outcome('succeeded'), 2000), true)
    } finally {
      await store.close()
    }
    const stats = await statsOf(admin, schema, 'operations', keys.length)
    assert.equal(stats.n_tup_upd, keys.length)
    assert.equal(stats.n_tup_hot_upd, keys.length)
  })

  test("an earlier version's schema is migrated in place: index on created_at, fillfactor 70, rows kept; its refunds table is left alone", async () => {
    const schema = fresh('migrate')
    // The keys tables as the version before made them.
    await admin.query(`
      CREATE SCHEMA ${schema};
      CREATE TABLE ${schema}.operations (
        key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, operation TEXT NOT NULL, target_ref TEXT NOT NULL,
        status TEXT NOT NULL, result TEXT, refusal TEXT, owner TEXT NOT NULL, lease_until BIGINT NOT NULL,
        created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
      CREATE INDEX operations_updated ON ${schema}.operations(updated_at);
      INSERT INTO ${schema}.operations VALUES ('kept', 'fp', 'refund', 'ch_1', 'succeeded', '{"a":1}', NULL, 'o', 0, 5, 6);
      CREATE TABLE ${schema}.refunds (
        refund_ref TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, transaction_ref TEXT NOT NULL,
        amount_minor BIGINT NOT NULL, currency TEXT NOT NULL, status TEXT NOT NULL, created_at BIGINT NOT NULL);
      INSERT INTO ${schema}.refunds VALUES ('re_1', 'kept', 'ch_1', 1, 'USD', 'succeeded', 5);`)
    const indexes = async () =>
      (
        await admin.query<{ indexname: string }>(
          'SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 ORDER BY indexname',
          [schema, 'operations'],
        )
      ).rows.map((r) => r.indexname)
    const options = async () =>
      (
        await admin.query<{ reloptions: string[] | null }>(
          `SELECT c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = $1 AND c.relname = 'operations'`,
          [schema],
        )
      ).rows[0]?.reloptions
    // Twice: the DDL runs at every start and must leave a migrated schema as it is.
    for (let i = 0; i < 2; i++) {
      const store = await openPostgresStore({ connectionString: PG_URL, schema })
      try {
        assert.deepEqual(await indexes(), ['operations_created', 'operations_pkey'])
        assert.deepEqual(await options(), ['fillfactor=70'])
        assert.equal((await store.get('kept'))?.status, 'succeeded')
        assert.equal(await purgeExpired(store, 30, 40 * DAY), 1)
        assert.equal(await store.get('kept'), undefined)
        await admin.query(
          `INSERT INTO ${schema}.operations VALUES ('kept', 'fp', 'refund', 'ch_1', 'succeeded', '{"a":1}', NULL, 'o', 0, 5, 6)`,
        )
        // Nothing reads or writes the earlier version's refunds table any more; it is the operator's to drop.
        const refunds = await admin.query<{ refund_ref: string }>(`SELECT refund_ref FROM ${schema}.refunds`)
        assert.deepEqual(
          refunds.rows.map((r) => r.refund_ref),
          ['re_1'],
        )
      } finally {
        await store.close()
      }
    }
  })

  test('batched claims, ledger writes and finishes probe by index once their plans are cached', async () => {
    const schema = fresh('plans')
    const store = await openPostgresStore({ connectionString: PG_URL, schema })
    const ledger = demoLedgerStore(store)
    try {
      await ledger.seed(Array.from({ length: 8 }, (_, i) => ({ kind: 'charge', ref: `ch_${i}`, doc: { n: 0 } })))
      // Rounds of 8 concurrent refunds-shaped calls: each round is one batch of each kind, and a named statement
      // gets its generic plan at its sixth run on a connection — here while the tables are still small.
      for (let round = 0; round < 30; round++) {
        const keys = Array.from({ length: 8 }, (_, i) => `k-${round}-${i}`)
        await Promise.all(keys.map((key) => store.claim(claimOf(key, 1000))))
        await Promise.all(
          keys.map((key, i) =>
            ledger.apply(key, 'charge', `ch_${i}`, (doc) => ({
              doc: { n: Number(doc?.n) + 1 },
              outcome: { key },
              put: [{ kind: `refund:ch_${i}`, ref: key, doc: { key } }],
            })),
          ),
        )
        await Promise.all(keys.map((key) => store.finish(key, 'o', outcome('succeeded'), 2000)))
      }
    } finally {
      await store.close()
    }
    for (const table of ['operations', 'ledger_docs', 'ledger_keys']) {
      const stats = await statsOf(admin, schema, table, table === 'operations' || table === 'ledger_docs' ? 240 : 0)
      // The tables are read by index only (the sequential scans of an empty table by CREATE INDEX read no row).
      assert.equal(stats.seq_tup_read, 0, `${table}: ${JSON.stringify(stats)}`)
    }
  })

  test("a connection string's own options are kept, and the store's session settings still apply", async () => {
    // An operator's DATABASE_URL may set session options; pg lets them replace the pool's own unless merged.
    const url = new URL(PG_URL)
    url.searchParams.set('options', '-c statement_timeout=4321 -c application_name=operator_app')
    const c = connectPostgres({ connectionString: url.href, schema: uniqueSchema('opts') })
    try {
      const show = async (p: pg.Pool, setting: string) =>
        ((await p.query(`SHOW ${setting}`)).rows[0] as Record<string, string>)[setting]
      assert.equal(await show(c.pool, 'statement_timeout'), '4321ms')
      assert.equal(await show(c.pool, 'application_name'), 'operator_app')
      assert.equal(await show(c.pool, 'enable_seqscan'), 'off')
      assert.equal(await show(c.pool, 'synchronous_commit'), 'on')
      assert.equal(await show(c.unflushedPool, 'statement_timeout'), '4321ms')
      assert.equal(await show(c.unflushedPool, 'enable_seqscan'), 'off')
      assert.equal(await show(c.unflushedPool, 'synchronous_commit'), 'off')
    } finally {
      await c.end()
    }
  })
})
