// What a PostgreSQL crash keeps of the session store: a closed session stays closed (DELETE waited for the WAL flush),
// an open or touch that no later synchronous commit flushed is lost (they do not wait). A private PostgreSQL cluster
// (initdb in a temporary directory) whose WAL writer is stopped, so nothing reaches the WAL file unless a commit
// flushes it itself; then the WAL writer is killed, PostgreSQL restarts after the crash and replays its WAL.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import pg from 'pg'
import { PgSessionStore } from '../src/store/pg-session-store.js'
import { type PrivatePostgres, privatePostgresSkip, startPrivatePostgres } from './private-postgres.js'

let cluster: PrivatePostgres | undefined
/** The WAL writer while the test holds it stopped (killed in `after` if the test failed before its crash). */
let stopped: number | undefined
const url = () => cluster?.url() as string

async function query<R extends pg.QueryResultRow>(sql: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url() })
  // A backend the crash ends under a query resets the socket: pg rejects the query AND emits 'error' on the client,
  // which with no listener is an uncaught exception that fails the test (whenReady's loop hits this after the kill).
  // The rejection is what whenReady handles; the event carries nothing more.
  c.on('error', () => {})
  await c.connect()
  try {
    return (await c.query<R>(sql)).rows
  } finally {
    await c.end()
  }
}

/** Connects until the cluster accepts connections and runs a WAL writer other than `previous` (after a crash: once
 * recovery finished and a new one started). */
async function whenReady(previous?: number): Promise<number> {
  const until = Date.now() + 60_000
  for (;;) {
    try {
      const [w] = await query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'`)
      if (w !== undefined && w.pid !== previous) return w.pid
    } catch (e) {
      if (Date.now() > until) throw new Error(`private PostgreSQL did not come back: ${String(e)}`)
    }
    await new Promise((r) => setImmediate(r))
  }
}

before(async () => {
  if (privatePostgresSkip !== undefined) return
  // No background writer, autovacuum or timed checkpoint: nothing else flushes the WAL during the test.
  cluster = await startPrivatePostgres({
    autovacuum: 'off',
    bgwriter_lru_maxpages: '0',
    checkpoint_timeout: '3600',
    wal_writer_delay: '10000',
    synchronous_commit: 'on',
    fsync: 'on',
  })
})

after(async () => {
  if (stopped !== undefined) process.kill(stopped, 'SIGKILL')
  await cluster?.dispose()
})

test('after a PostgreSQL crash a closed session stays closed; unflushed opens and touches are lost', {
  skip: privatePostgresSkip,
}, async () => {
  const store = await PgSessionStore.open({ connectionString: url(), schema: 'crash', maxConnections: 1 })
  const caps = { idleMs: 60_000, maxSessions: 10, maxPerOwner: 10 }
  const table = async () =>
    (await query<{ key: string; last_seen: string }>('SELECT key, last_seen FROM crash.mcp_sessions ORDER BY key')).map(
      (r) => `${r.key}@${r.last_seen}`,
    )
  try {
    assert.equal(await store.open('closed', 'alice', 1_000, caps), true)
    assert.equal(await store.open('kept', 'alice', 1_000, caps), true)
    await query('CREATE TABLE public.flush_marker ()') // a synchronous commit: everything above is on disk
    const walWriter = await whenReady()
    process.kill(walWriter, 'SIGSTOP')
    stopped = walWriter
    assert.equal(await store.close('closed', 2_000, caps.idleMs), true)
    assert.equal(await store.open('opened-after', 'alice', 3_000, caps), true)
    assert.equal(await store.touch('kept', 4_000, caps.idleMs), true)
    assert.deepEqual(await table(), ['kept@4000', 'opened-after@3000'])
    // The crash: PostgreSQL sees a child die, ends every backend, reinitializes shared memory (losing WAL not yet
    // written) and replays the WAL on disk.
    process.kill(walWriter, 'SIGKILL')
    stopped = undefined
    await whenReady(walWriter)
    assert.deepEqual(await table(), ['kept@1000'])
  } finally {
    await store.dispose().catch(() => {})
  }
})
