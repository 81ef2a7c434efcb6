// The PostgreSQL session store as replicas use it: two stores (two pools, as two replicas have) on one schema. The
// caps hold exactly under concurrent opens on both, the per-owner cap evicts the least recently seen whichever
// replica saw it last, idle sessions free room; opens and touches commit without waiting for the WAL flush, closes
// with the server's synchronous_commit.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { PgSessionStore } from '../src/store/pg-session-store.js'
import { dropSchemas, PG_URL, probePostgres, uniqueSchema } from './postgres.js'

const pgSkip = await probePostgres()

describe('PostgreSQL session store across replicas', { skip: pgSkip }, () => {
  const schemas: string[] = []
  const stores: PgSessionStore[] = []
  const twoReplicas = async () => {
    const schema = uniqueSchema('sess')
    schemas.push(schema)
    // Named, so a test can find these stores' connections among other users of the database.
    const app = schema
    const url = new URL(PG_URL)
    url.searchParams.set('application_name', app)
    const a = await PgSessionStore.open({ connectionString: url.href, schema })
    const b = await PgSessionStore.open({ connectionString: url.href, schema })
    stores.push(a, b)
    return { a, b, schema, app }
  }
  const admin = new pg.Client({ connectionString: PG_URL })
  const rows = async (schema: string) =>
    (await admin.query<{ key: string }>(`SELECT key FROM ${schema}.mcp_sessions ORDER BY key`)).rows.map((r) => r.key)
  before(() => admin.connect())
  after(async () => {
    for (const s of stores) await s.dispose()
    await admin.end()
    await dropSchemas(...schemas)
  })

  test('opens on both replicas wait for one another: with the open lock held none finishes; then both caps are exact', async () => {
    const { a, b, schema, app } = await twoReplicas()
    // Every pooled connection open first, so the opens below overlap rather than queue behind connecting.
    await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).touch('none', 0, 1)))
    const caps = { idleMs: 60_000, maxSessions: 7, maxPerOwner: 3 }
    await admin.query('SELECT pg_advisory_lock(7301)')
    let settled = false
    const opens = Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? a : b).open(`k${i}`, i < 10 ? 'alice' : `owner${i}`, 1_000 + i, caps),
      ),
    ).finally(() => {
      settled = true
    })
    try {
      // Either every pooled connection of both replicas waits on the lock (as it must), or the opens finish without
      // it: whichever comes first, no clock involved.
      let waiting = 0
      while (!settled && waiting < 8) {
        const r = await admin.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks l JOIN pg_stat_activity s USING (pid)
           WHERE l.locktype = 'advisory' AND l.objid = 7301 AND NOT l.granted AND s.application_name = $1`,
          [app],
        )
        waiting = Number(r.rows[0]?.n)
      }
      assert.equal(settled, false, 'opens finished while another holder had the open lock')
      assert.equal(waiting, 8)
    } finally {
      await admin.query('SELECT pg_advisory_unlock(7301)')
    }
    const opened = await opens
    const open = await rows(schema)
    const alices = open.filter((k) => Number(k.slice(1)) < 10)
    assert.equal(open.length, 7)
    assert.ok(alices.length <= 3, open.join(' '))
    // Every other owner's open that said yes is still there: nothing evicted it, nothing was recorded beyond the cap.
    assert.equal(opened.slice(10).filter(Boolean).length, 7 - alices.length)
  })

  test('the per-owner cap evicts the least recently seen, whichever replica saw it; idle ones free room', async () => {
    const { a, b, schema } = await twoReplicas()
    const caps = { idleMs: 1_000, maxSessions: 3, maxPerOwner: 2 }
    assert.equal(await a.open('a1', 'alice', 0, caps), true)
    assert.equal(await b.open('a2', 'alice', 10, caps), true)
    assert.equal(await b.touch('a1', 20, caps.idleMs), true) // a1 now seen after a2
    assert.equal(await a.open('a3', 'alice', 30, caps), true) // evicts a2
    assert.deepEqual(await rows(schema), ['a1', 'a3'])
    assert.equal(await b.touch('a2', 40, caps.idleMs), false)
    assert.equal(await b.open('b1', 'bob', 50, caps), true)
    assert.equal(await a.open('c1', 'carol', 60, caps), false) // three open: full, nothing recorded
    assert.deepEqual(await rows(schema), ['a1', 'a3', 'b1'])
    // At 1 030 a1 (seen at 20) and a3 (seen at 30) are idle: the open sweeps them and fits.
    assert.equal(await b.open('c1', 'carol', 1_030, caps), true)
    assert.deepEqual(await rows(schema), ['b1', 'c1'])
    assert.equal(await a.touch('a1', 1_030, caps.idleMs), false)
    assert.equal(await a.close('b1', 1_040, caps.idleMs), true)
    assert.equal(await b.close('b1', 1_040, caps.idleMs), false)
    assert.equal(await b.touch('b1', 1_040, caps.idleMs), false)
  })

  test('open and touch commit without waiting for the WAL flush, only for their own transaction', async () => {
    const { schema } = await twoReplicas()
    const serverSetting = (await admin.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`))
      .rows[0]?.s
    assert.notEqual(serverSetting, 'off', 'the test database must flush synchronously to show the difference')
    const caps = [60_000, 10, 10]
    for (const call of [
      [`SELECT ${schema}.mcp_session_open($1, $2, $3, $4, $5, $6)`, ['t1', 'alice', 1_000, ...caps]],
      [`SELECT ${schema}.mcp_session_touch($1, $2, $3)`, ['t1', 2_000, 60_000]],
    ] as const) {
      await admin.query('BEGIN')
      try {
        await admin.query(call[0], [...call[1]])
        const inside = await admin.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`)
        assert.equal(inside.rows[0]?.s, 'off', call[0])
      } finally {
        await admin.query('COMMIT')
      }
      // The connection's later statements (a close on the same pooled connection) keep the server's setting.
      const afterwards = await admin.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`)
      assert.equal(afterwards.rows[0]?.s, serverSetting, call[0])
    }
  })
})
