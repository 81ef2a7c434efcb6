// The PostgreSQL session store as replicas use it: two stores (two pools, as two replicas have) on one schema. The
// caps hold exactly under concurrent (batched) opens on both, the per-owner cap evicts the least recently seen
// whichever replica saw it last, idle sessions free room; a session closed on one replica is refused on the other at
// its next request (nothing is kept locally); a touch writes only when the recorded last_seen is older than
// refreshMs; opens and touches commit without waiting for the WAL flush, closes with the server's synchronous_commit.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { PgSessionStore, refreshMs } from '../src/store/pg-session-store.js'
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
      // Either both replicas' open statements (each carrying that replica's batch of opens) wait on the lock, as they
      // must, or the opens finish without it: whichever comes first, no clock involved.
      let waiting = 0
      while (!settled && waiting < 2) {
        const r = await admin.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_locks l JOIN pg_stat_activity s USING (pid)
           WHERE l.locktype = 'advisory' AND l.objid = 7301 AND NOT l.granted AND s.application_name = $1`,
          [app],
        )
        waiting = Number(r.rows[0]?.n)
      }
      assert.equal(settled, false, 'opens finished while another holder had the open lock')
      assert.equal(waiting, 2)
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

  test('a session closed on B is refused on A at its very next request, though A just saw it (nothing is kept)', async () => {
    const { a, b } = await twoReplicas()
    const caps = { idleMs: 60_000, maxSessions: 100, maxPerOwner: 100 }
    for (let round = 0; round < 3; round++) {
      const key = `s${round}`
      assert.equal(await a.open(key, 'alice', 1_000, caps), true)
      // Fresh: these touches only read.
      assert.equal(await a.touch(key, 1_001, caps.idleMs), true)
      assert.equal(await a.touch(key, 1_002, caps.idleMs), true)
      assert.equal(await b.close(key, 1_003, caps.idleMs), true)
      assert.equal(await a.touch(key, 1_004, caps.idleMs), false)
      assert.equal(await a.close(key, 1_004, caps.idleMs), false)
    }
    // Concurrent: closes on B and touches on A in flight together. Every touch that starts once its close answered
    // is refused.
    const keys = Array.from({ length: 30 }, (_, i) => `c${i}`)
    await Promise.all(keys.map((k) => a.open(k, 'bob', 2_000, caps)))
    await Promise.all(keys.map((k) => a.touch(k, 2_001, caps.idleMs)))
    const after = await Promise.all(
      keys.map(async (k) => {
        const closed = await b.close(k, 2_002, caps.idleMs)
        return [closed, await a.touch(k, 2_003, caps.idleMs)]
      }),
    )
    assert.deepEqual(
      after,
      keys.map(() => [true, false]),
    )
  })

  test('two closes of one session, on two replicas at once: exactly one says it was open', async () => {
    const { a, b } = await twoReplicas()
    const caps = { idleMs: 60_000, maxSessions: 100, maxPerOwner: 100 }
    const keys = Array.from({ length: 20 }, (_, i) => `d${i}`)
    await Promise.all(keys.map((k) => b.open(k, 'alice', 1_000, caps)))
    const answers = await Promise.all(
      keys.flatMap((k) => [
        a.close(k, 1_001, caps.idleMs),
        b.close(k, 1_001, caps.idleMs),
        a.close(k, 1_001, caps.idleMs),
      ]),
    )
    for (let i = 0; i < keys.length; i++)
      assert.equal(answers.slice(3 * i, 3 * i + 3).filter(Boolean).length, 1, keys[i])
  })

  test('a touch writes last_seen only when the recorded one is older than refreshMs; idle expiry follows the recorded one', async () => {
    const { a, b, schema } = await twoReplicas()
    const caps = { idleMs: 6_400, maxSessions: 10, maxPerOwner: 10 }
    const refresh = refreshMs(caps.idleMs)
    assert.equal(refresh, 100)
    const lastSeen = async (key: string) =>
      Number(
        (await admin.query(`SELECT last_seen FROM ${schema}.mcp_sessions WHERE key = $1`, [key])).rows[0]?.last_seen,
      )
    assert.equal(await a.open('g', 'alice', 0, caps), true)
    assert.equal(await b.touch('g', refresh - 1, caps.idleMs), true)
    assert.equal(await lastSeen('g'), 0, 'a touch within refreshMs of the last write wrote')
    assert.equal(await a.touch('g', refresh, caps.idleMs), true)
    assert.equal(await lastSeen('g'), refresh)
    assert.equal(await b.touch('g', refresh + 50, caps.idleMs), true)
    assert.equal(await lastSeen('g'), refresh)
    // Last request at refresh + 50, last write at refresh: it expires idleMs after the write, 50 ms early (< refreshMs).
    assert.equal(await a.touch('g', refresh + caps.idleMs - 1, caps.idleMs), true)
    assert.equal(await lastSeen('g'), refresh + caps.idleMs - 1)
    assert.equal(await b.touch('g', refresh + 2 * caps.idleMs - 1, caps.idleMs), false)
    assert.equal(await a.close('g', refresh + 2 * caps.idleMs - 1, caps.idleMs), false)
  })

  test('idle rows stay until an open finds the store full; they are refused meanwhile and that open sweeps them', async () => {
    const { a, b, schema } = await twoReplicas()
    const caps = { idleMs: 1_000, maxSessions: 3, maxPerOwner: 3 }
    assert.equal(await a.open('i1', 'alice', 0, caps), true)
    assert.equal(await b.open('i2', 'bob', 0, caps), true)
    assert.equal(await a.open('i3', 'carol', 1_500, caps), true) // two idle rows, but room: nothing swept
    assert.deepEqual(await rows(schema), ['i1', 'i2', 'i3'])
    assert.equal(await b.touch('i1', 1_500, caps.idleMs), false)
    assert.equal(await b.open('i4', 'dave', 1_600, caps), true) // full: the idle i1 and i2 go, i4 fits
    assert.deepEqual(await rows(schema), ['i3', 'i4'])
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
      [`SELECT ${schema}.mcp_session_open_many($1, $2, $3, $4, $5, $6)`, [['t1'], ['alice'], 1_000, ...caps]],
      [`SELECT ${schema}.mcp_session_touch_many($1, $2, $3, $4)`, [['t1'], 2_000, 60_000, refreshMs(60_000)]],
    ] as const) {
      await admin.query('BEGIN')
      try {
        await admin.query(call[0], [...call[1]])
        const inside = await admin.query<{ s: string; xid: string | null }>(
          `SELECT current_setting('synchronous_commit') AS s, txid_current_if_assigned() AS xid`,
        )
        assert.equal(inside.rows[0]?.s, 'off', call[0])
        assert.notEqual(inside.rows[0]?.xid, null, `${call[0]} wrote nothing`)
      } finally {
        await admin.query('COMMIT')
      }
      // The connection's later statements (a close on the same pooled connection) keep the server's setting.
      const afterwards = await admin.query<{ s: string }>(`SELECT current_setting('synchronous_commit') AS s`)
      assert.equal(afterwards.rows[0]?.s, serverSetting, call[0])
    }
    // A touch of a session seen within refreshMs writes nothing: no transaction id, no commit record, no WAL.
    await admin.query('BEGIN')
    try {
      const r = await admin.query(`SELECT ${schema}.mcp_session_touch_many($1, $2, $3, $4) AS key`, [
        ['t1'],
        2_001,
        60_000,
        refreshMs(60_000),
      ])
      assert.deepEqual(
        r.rows.map((row) => row.key),
        ['t1'],
      )
      const inside = await admin.query<{ xid: string | null }>(`SELECT txid_current_if_assigned() AS xid`)
      assert.equal(inside.rows[0]?.xid, null)
    } finally {
      await admin.query('COMMIT')
    }
  })
})
