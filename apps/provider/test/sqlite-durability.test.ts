// SQLite durability is an explicit choice, read back from the connection; writes are group-committed, and a write
// is answered only once its transaction is committed (visible to another connection).
import assert from 'node:assert/strict'
import { existsSync, fdatasync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import Database from 'better-sqlite3'
import { demoLedgerStore, openSqliteStore, type SqliteStore } from '../src/index.js'
import { DISK_ROOM_BYTES, openSqliteConnection } from '../src/store/sqlite-connection.js'
import { startTestProvider } from './helpers.js'

let dir: string
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-durability-'))
})
after(() => {
  rmSync(dir, { recursive: true, force: true })
})

const claimRequest = (key: string) => ({
  key,
  fingerprint: 'fp',
  operation: 'refund' as const,
  targetRef: 'ch_1',
  owner: 'o1',
  nowMs: 1_000,
  leaseMs: 30_000,
})
const claim = (store: SqliteStore, key: string) => store.claim(claimRequest(key))

test("durability defaults to 'power-loss': WAL, synced at every commit (by the store, off the event loop)", async () => {
  const store = openSqliteStore(join(dir, 'default.sqlite'))
  try {
    assert.deepEqual(store.settings, {
      durability: 'power-loss',
      journalMode: 'wal',
      synchronous: 'NORMAL',
      walSync: 'every-commit',
    })
  } finally {
    await store.close()
  }
})

test("durability 'process-crash' is WAL with synchronous=NORMAL, synced at checkpoints; an unknown value is a RangeError", async () => {
  const store = openSqliteStore(join(dir, 'pc.sqlite'), { durability: 'process-crash' })
  try {
    assert.deepEqual(store.settings, {
      durability: 'process-crash',
      journalMode: 'wal',
      synchronous: 'NORMAL',
      walSync: 'checkpoint',
    })
  } finally {
    await store.close()
  }
  assert.throws(() => openSqliteStore(join(dir, 'bad.sqlite'), { durability: 'fast' as never }), RangeError)
})

test('startProvider passes the durability through to its SQLite store', async () => {
  const file = join(dir, 'provider.sqlite')
  const p = await startTestProvider({ store: { kind: 'sqlite', file, durability: 'process-crash' } })
  try {
    assert.equal((p.store as SqliteStore).settings.walSync, 'checkpoint')
  } finally {
    await p.stop()
  }
})

test('a claim is answered only after it is committed: another connection already sees the row', async () => {
  const file = join(dir, 'visible.sqlite')
  const store = openSqliteStore(file)
  const reader = new Database(file, { readonly: true })
  try {
    const pending = claim(store, 'k-visible')
    // Not yet committed while the caller still waits (the batch commits on a later turn of the event loop).
    assert.equal(reader.prepare('SELECT status FROM operations WHERE key = ?').get('k-visible'), undefined)
    assert.deepEqual(await pending, { kind: 'claimed', recovering: false })
    assert.deepEqual(reader.prepare('SELECT status FROM operations WHERE key = ?').get('k-visible'), {
      status: 'running',
    })
  } finally {
    reader.close()
    await store.close()
  }
})

test('writes batched into one commit stay independent: a failing one rolls back alone', async () => {
  const file = join(dir, 'batch.sqlite')
  const store = openSqliteStore(file)
  try {
    await demoLedgerStore(store).seed([{ kind: 'transaction', ref: 'ch_1', doc: { n: 0 } }])
    // Issued in the same turn: they share one transaction.
    const results = await Promise.allSettled([
      claim(store, 'k-a'),
      demoLedgerStore(store).apply('k-bad', 'transaction', 'ch_1', () => {
        throw new Error('mutation failed')
      }),
      demoLedgerStore(store).apply('k-good', 'transaction', 'ch_1', (doc) => ({
        doc: { n: Number(doc?.n) + 1 },
        outcome: 'done',
      })),
      claim(store, 'k-a'),
    ])
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    )
    assert.equal((results[1] as PromiseRejectedResult).reason.code, 'ERR_PROVIDER_STORE')
    // The second claim of the same key, in the same batch, saw the first one's row.
    assert.equal((results[3] as PromiseFulfilledResult<{ kind: string }>).value.kind, 'exists')
  } finally {
    await store.close()
  }
  const reopened = openSqliteStore(file)
  try {
    assert.equal((await reopened.get('k-a'))?.status, 'running')
    assert.equal(await demoLedgerStore(reopened).lookup('k-bad'), undefined)
    assert.equal(await demoLedgerStore(reopened).lookup('k-good'), 'done')
    assert.deepEqual(await demoLedgerStore(reopened).get('transaction', 'ch_1'), { n: 1 })
  } finally {
    await reopened.close()
  }
})

test('a write is atomic in its batch: one that throws after changing rows leaves none of them; the others commit', async () => {
  const file = join(dir, 'atomic-write.sqlite')
  const c = openSqliteConnection(file, 'power-loss', 'CREATE TABLE IF NOT EXISTS t (v INTEGER UNIQUE)')
  const insert = c.db.prepare('INSERT INTO t VALUES (?)')
  try {
    // Issued in the same turn: one transaction. The second inserts 2, then fails on a duplicate of 1.
    const results = await Promise.allSettled([
      c.write(() => insert.run(1)),
      c.write(() => {
        insert.run(2)
        insert.run(1)
      }),
      c.write(() => insert.run(3).changes),
    ])
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    )
    assert.equal((results[1] as PromiseRejectedResult).reason.code, 'ERR_PROVIDER_STORE')
    assert.equal((results[2] as PromiseFulfilledResult<number>).value, 1)
    // Alone in its batch, a failing write changes nothing either.
    await assert.rejects(
      c.write(() => {
        insert.run(4)
        insert.run(3)
      }),
      { code: 'ERR_PROVIDER_STORE' },
    )
    assert.deepEqual(c.db.prepare('SELECT v FROM t ORDER BY v').all(), [{ v: 1 }, { v: 3 }])
  } finally {
    c.close()
  }
})

test('close commits writes still queued', async () => {
  const file = join(dir, 'close.sqlite')
  const store = openSqliteStore(file)
  const pending = claim(store, 'k-close')
  await store.close()
  assert.equal((await pending).kind, 'claimed')
  const reopened = openSqliteStore(file)
  try {
    assert.equal((await reopened.get('k-close'))?.status, 'running')
  } finally {
    await reopened.close()
  }
})

// 'power-loss' syncs the WAL itself (fdatasync in the thread pool) instead of SQLite's synchronous=FULL on the event
// loop; the seam below holds that sync back to show nobody is answered before it returned.
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r))
}

/** Whether p settles within a few turns of the event loop (no sync is released meanwhile). */
const settlesNow = async <T>(p: Promise<T>) => {
  let done = false
  p.then(
    () => (done = true),
    () => (done = true),
  )
  for (let i = 0; i < 20 && !done; i++) await turns(1)
  return done
}

test("'power-loss': a write, and a read that saw it, are answered only after the WAL sync covering the commit", async () => {
  const file = join(dir, 'walsync.sqlite')
  const held: (() => void)[] = []
  const c = openSqliteConnection(file, 'power-loss', 'CREATE TABLE IF NOT EXISTS t (v INTEGER)', {
    fdatasync: (fd, done) => held.push(() => fdatasync(fd, done)),
  })
  const reader = new Database(file, { readonly: true })
  try {
    let written = false
    let read = false
    const write = c
      .write(() => c.db.prepare('INSERT INTO t VALUES (1)').run())
      .then(() => {
        written = true
      })
    for (let i = 0; i < 50 && held.length === 0; i++) await turns(1)
    assert.equal(held.length, 1, 'the commit asked for one WAL sync')
    // Committed (another connection sees it), but not answered: its sync has not returned.
    assert.deepEqual(reader.prepare('SELECT count(*) AS n FROM t').get(), { n: 1 })
    const readBack = c
      .read(() => c.db.prepare('SELECT count(*) AS n FROM t').get())
      .then((row) => {
        read = true
        return row
      })
    await turns(5)
    assert.equal(written, false)
    assert.equal(read, false)
    held.shift()?.()
    await write
    assert.deepEqual(await readBack, { n: 1 })
    assert.ok(written && read)
  } finally {
    reader.close()
    c.close()
  }
})

test("'power-loss': a failed WAL sync fails the writes it covered (ERR_PROVIDER_STORE)", async () => {
  const c = openSqliteConnection(
    join(dir, 'walfail.sqlite'),
    'power-loss',
    'CREATE TABLE IF NOT EXISTS t (v INTEGER)',
    {
      fdatasync: (_fd, done) => setImmediate(() => done(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }))),
    },
  )
  try {
    await assert.rejects(
      c.write(() => c.db.prepare('INSERT INTO t VALUES (1)').run()),
      { code: 'ERR_PROVIDER_STORE' },
    )
  } finally {
    c.close()
  }
})

test('a store outage ends with a write that changed a row, not with one that changed nothing (a full disk commits those)', async () => {
  for (const durability of ['power-loss', 'process-crash'] as const) {
    const c = openSqliteConnection(
      join(dir, `outage-end-${durability}.sqlite`),
      durability,
      'CREATE TABLE t (v INTEGER)',
    )
    try {
      // SQLite answering SQLITE_FULL to a write: the store is down (what a full disk does to a write needing a page).
      const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
      await assert.rejects(
        c.write(() => {
          throw full
        }),
        { code: 'ERR_PROVIDER_STORE' },
      )
      assert.equal(c.health.outage?.code, 'SQLITE_FULL', durability)
      // An UPDATE matching no row (ending the lease of a claim whose own write failed) writes no page: its COMMIT
      // succeeds on a full disk, and says no more about it than a read.
      assert.equal((await c.write(() => c.db.prepare('UPDATE t SET v = 2 WHERE v = -1').run())).changes, 0)
      assert.equal(c.health.outage?.code, 'SQLITE_FULL', `${durability}: a write that changed nothing ended the outage`)
      await c.write(() => c.db.prepare('INSERT INTO t VALUES (1)').run())
      assert.equal(c.health.outage, undefined, `${durability}: a write that changed a row ends the outage`)
    } finally {
      c.close()
    }
  }
})

test('a disk outage ends with a write made once the file system has room again, not with one that fit in held space', async () => {
  for (const durability of ['power-loss', 'process-crash'] as const) {
    let free = 0
    const c = openSqliteConnection(
      join(dir, `outage-room-${durability}.sqlite`),
      durability,
      'CREATE TABLE t (v INTEGER)',
      { freeBytes: () => free },
    )
    const insert = () => c.write(() => c.db.prepare('INSERT INTO t VALUES (1)').run())
    try {
      const full = Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })
      await assert.rejects(
        c.write(() => {
          throw full
        }),
        { code: 'ERR_PROVIDER_STORE' },
      )
      // The disk is still full, but this write fit (the WAL's reused space): the outage goes on.
      await insert()
      assert.equal(c.health.outage?.code, 'SQLITE_FULL', `${durability}: a write that fit ended the outage`)
      free = DISK_ROOM_BYTES - 1
      await insert()
      assert.equal(c.health.outage?.code, 'SQLITE_FULL', durability)
      free = DISK_ROOM_BYTES
      await insert()
      assert.equal(c.health.outage, undefined, `${durability}: a write with room again ends the outage`)
      // Any other outage (contention) ends with the next write, room or not.
      free = 0
      const busy = Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })
      await assert.rejects(
        c.write(() => {
          throw busy
        }),
        { code: 'ERR_PROVIDER_STORE' },
      )
      // (read through a function: the assertions above narrowed the property for the type checker)
      const outage = () => c.health.outage
      assert.equal(outage()?.kind, 'contention')
      await insert()
      assert.equal(c.health.outage, undefined, durability)
    } finally {
      c.close()
    }
  }
})

/**
 * A power-loss store whose WAL syncs can be held back: after hold(), no sync returns until release() (which also
 * ends the holding); holdsSyncs() says whether one was held.
 */
function heldSyncStore(name: string) {
  const held: (() => void)[] = []
  let holding = false
  const store = openSqliteStore(
    join(dir, name),
    {},
    { fdatasync: (fd, done) => (holding ? held.push(() => fdatasync(fd, done)) : fdatasync(fd, done)) },
  )
  return {
    store,
    hold: () => {
      holding = true
    },
    holdsSyncs: () => held.length > 0,
    release: () => {
      holding = false
      for (const r of held.splice(0)) r()
    },
  }
}

test("'power-loss': a won claim and a ledger mutation are answered at their COMMIT; the finish after them, and a claim that found a row, wait for the WAL sync", async () => {
  const { store, hold, holdsSyncs, release } = heldSyncStore('commit-only.sqlite')
  const ledger = demoLedgerStore(store)
  try {
    await ledger.seed([{ kind: 'transaction', ref: 'ch_1', doc: { n: 0 } }])
    hold() // from here no WAL sync returns until released
    const won = claim(store, 'k-fast')
    assert.equal(await settlesNow(won), true, 'a won claim is answered at its COMMIT')
    assert.deepEqual(await won, { kind: 'claimed', recovering: false })
    const applied = ledger.apply('k-fast', 'transaction', 'ch_1', (doc) => ({
      doc: { n: Number(doc?.n) + 1 },
      outcome: 'refunded',
    }))
    assert.equal(await settlesNow(applied), true, 'a ledger mutation is answered at its COMMIT')
    const outcome = { status: 'succeeded' as const, result: { ok: true }, refusal: null }
    const finish = store.finish('k-fast', 'o1', outcome, 2_000)
    assert.equal(await settlesNow(finish), false, 'the finish waits for its WAL sync')
    const again = claim(store, 'k-fast')
    assert.equal(await settlesNow(again), false, 'a claim that found the row waits for the WAL sync')
    const read = store.get('k-fast')
    assert.equal(await settlesNow(read), false, 'a read of unsynced commits waits too')
    assert.ok(holdsSyncs())
    release()
    assert.equal(await finish, true)
    assert.equal((await again).kind, 'exists')
    assert.equal((await read)?.status, 'succeeded')
  } finally {
    release()
    await store.close()
  }
})

test("'power-loss': a one-write refund (applyClaiming) and a ledger write that finishes its key wait for the WAL sync; one that wrote nothing does not", async () => {
  const { store, hold, holdsSyncs, release } = heldSyncStore('one-write.sqlite')
  const ledger = demoLedgerStore(store)
  const outcome = { status: 'succeeded' as const, result: { ok: true }, refusal: null }
  const plusOne = (doc: Record<string, unknown> | undefined) => ({
    doc: { n: Number(doc?.n) + 1 },
    outcome: 'refunded',
  })
  try {
    await ledger.seed([{ kind: 'transaction', ref: 'ch_1', doc: { n: 0 } }])
    hold() // from here no WAL sync returns until released
    const oneWrite = ledger.applyClaiming(claimRequest('k-one'), 'transaction', 'ch_1', plusOne, {
      recordOf: () => ({ outcome, nowMs: 2_000 }),
    })
    assert.equal(await settlesNow(oneWrite), false, 'a one-write refund waits for its WAL sync')
    // A seen key writes nothing: nothing of it to wait for (the usual path that follows reads, and waits then).
    const declined = ledger.applyClaiming(claimRequest('k-one'), 'transaction', 'ch_1', plusOne, {
      recordOf: () => ({ outcome, nowMs: 2_000 }),
    })
    assert.equal(await settlesNow(declined), true, 'a one-write refund that wrote nothing is answered at once')
    assert.equal(await declined, undefined)
    const won = claim(store, 'k-two')
    assert.equal(await settlesNow(won), true, 'a won claim is answered at its COMMIT')
    const finishing = ledger.apply('k-two', 'transaction', 'ch_1', plusOne, {
      finish: { owner: 'o1', recordOf: () => ({ outcome, nowMs: 2_000 }) },
    })
    assert.equal(await settlesNow(finishing), false, 'a ledger write that finishes its key waits for its WAL sync')
    assert.ok(holdsSyncs())
    release()
    assert.deepEqual(await oneWrite, { outcome: 'refunded' })
    assert.equal((await finishing).finished, true)
    assert.equal((await store.get('k-one'))?.status, 'succeeded')
    assert.equal((await store.get('k-two'))?.status, 'succeeded')
    assert.equal((await ledger.get('transaction', 'ch_1'))?.n, 2)
  } finally {
    release()
    await store.close()
  }
})

// Checkpoints in a worker thread (sqlite-checkpointer.ts). Each write adds a 4 KiB blob: at least one WAL page per
// commit, and 3 000 commits in all. SQLite's own threshold is raised to 16 000 pages, so without the worker the WAL
// would hold every one of them; with it, cycles rewind the WAL to its start and it stays far smaller.
const BLOB_WRITES = 3_000
async function writeBlobs(c: ReturnType<typeof openSqliteConnection>) {
  const insert = c.db.prepare('INSERT INTO t VALUES (?)')
  const blob = Buffer.alloc(4096, 7)
  for (let i = 0; i < BLOB_WRITES; i += 10) {
    // Ten writes per turn of the event loop (one group commit), paced as a busy server's: ~10 000 pages/s at most.
    await Promise.all(Array.from({ length: 10 }, () => c.write(() => insert.run(blob))))
    await new Promise((r) => setTimeout(r, 1))
  }
}

for (const durability of ['power-loss', 'process-crash'] as const) {
  test(`'${durability}': checkpoints run in a worker thread; under steady writes the WAL starts over and stays small, nothing is lost`, async () => {
    const file = join(dir, `checkpointer-${durability}.sqlite`)
    const c = openSqliteConnection(file, durability, 'CREATE TABLE IF NOT EXISTS t (v BLOB)', {
      checkpoints: { everyMs: 10 },
    })
    try {
      assert.ok(c.checkpointer, 'the checkpointer started')
      assert.equal(c.db.pragma('wal_autocheckpoint', { simple: true }), 16_000, "SQLite's own threshold is raised")
      // One commit, then its cycle: the worker is up (starting it takes a while on a busy machine).
      await c.write(() => c.db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(4096, 7)))
      for (let i = 0; i < 1_000 && c.checkpointer?.cycles === 0; i++) await new Promise((r) => setTimeout(r, 10))
      const cyclesBefore = c.checkpointer?.cycles ?? 0
      assert.ok(cyclesBefore > 0, 'the first commit was checkpointed')
      await writeBlobs(c)
      assert.ok((c.checkpointer?.cycles ?? 0) > cyclesBefore, 'cycles checkpointed every frame while writes went on')
      const walPages = statSync(`${file}-wal`).size / 4096
      assert.ok(walPages < BLOB_WRITES / 2, `the WAL rewound (${walPages.toFixed(0)} pages for ${BLOB_WRITES} commits)`)
      assert.deepEqual(c.db.prepare('SELECT count(*) AS n FROM t').get(), { n: BLOB_WRITES + 1 })
    } finally {
      c.close()
    }
    // Its connection closed first, so this one was the last: it checkpointed and removed the WAL.
    assert.equal(existsSync(`${file}-wal`), false)
    const reopened = new Database(file, { readonly: true })
    try {
      assert.deepEqual(reopened.prepare('SELECT count(*) AS n FROM t').get(), { n: BLOB_WRITES + 1 })
    } finally {
      reopened.close()
    }
  })
}

test('without the worker (checkpoints: false) SQLite checkpoints in its commits, at its default threshold', () => {
  const c = openSqliteConnection(
    join(dir, 'no-checkpointer.sqlite'),
    'power-loss',
    'CREATE TABLE IF NOT EXISTS t (v BLOB)',
    {
      checkpoints: false,
    },
  )
  try {
    assert.equal(c.checkpointer, undefined)
    assert.equal(c.db.pragma('wal_autocheckpoint', { simple: true }), 1_000)
  } finally {
    c.close()
  }
})

test('a checkpointer whose worker dies hands checkpoints back to SQLite (1 000 pages); writes go on', async () => {
  const file = join(dir, 'checkpointer-dies.sqlite')
  const c = openSqliteConnection(file, 'power-loss', 'CREATE TABLE IF NOT EXISTS t (v BLOB)', {
    checkpoints: { everyMs: 10, workerModule: join(dir, 'no-such-module.js') },
  })
  try {
    assert.ok(c.checkpointer, 'the worker started (it fails as it loads its module)')
    for (let i = 0; i < 500 && c.db.pragma('wal_autocheckpoint', { simple: true }) !== 1_000; i++) {
      await new Promise((r) => setTimeout(r, 10))
    }
    assert.equal(c.db.pragma('wal_autocheckpoint', { simple: true }), 1_000)
    await writeBlobs(c)
    assert.equal(c.checkpointer?.cycles, 0)
    assert.ok(statSync(`${file}-wal`).size / 4096 < 1_100, "SQLite's own checkpoints kept the WAL at its threshold")
    assert.deepEqual(c.db.prepare('SELECT count(*) AS n FROM t').get(), { n: BLOB_WRITES })
  } finally {
    c.close()
  }
})
