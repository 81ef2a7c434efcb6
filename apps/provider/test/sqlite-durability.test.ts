// SQLite durability is an explicit choice, read back from the connection; writes are group-committed, and a write
// is answered only once its transaction is committed (visible to another connection).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import Database from 'better-sqlite3'
import { demoLedgerStore, openSqliteStore, type SqliteStore } from '../src/index.js'
import { startTestProvider } from './helpers.js'

let dir: string
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-durability-'))
})
after(() => {
  rmSync(dir, { recursive: true, force: true })
})

const claim = (store: SqliteStore, key: string) =>
  store.claim({
    key,
    fingerprint: 'fp',
    operation: 'refund',
    targetRef: 'ch_1',
    owner: 'o1',
    nowMs: 1_000,
    leaseMs: 30_000,
  })

test("durability defaults to 'power-loss': WAL with synchronous=FULL", async () => {
  const store = openSqliteStore(join(dir, 'default.sqlite'))
  try {
    assert.deepEqual(store.settings, { durability: 'power-loss', journalMode: 'wal', synchronous: 'FULL' })
  } finally {
    await store.close()
  }
})

test("durability 'process-crash' is WAL with synchronous=NORMAL; an unknown value is a RangeError", async () => {
  const store = openSqliteStore(join(dir, 'pc.sqlite'), { durability: 'process-crash' })
  try {
    assert.deepEqual(store.settings, { durability: 'process-crash', journalMode: 'wal', synchronous: 'NORMAL' })
  } finally {
    await store.close()
  }
  assert.throws(() => openSqliteStore(join(dir, 'bad.sqlite'), { durability: 'fast' as never }), RangeError)
})

test('startProvider passes the durability through to its SQLite store', async () => {
  const file = join(dir, 'provider.sqlite')
  const p = await startTestProvider({ store: { kind: 'sqlite', file, durability: 'process-crash' } })
  try {
    assert.equal((p.store as SqliteStore).settings.synchronous, 'NORMAL')
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
    // Issued in the same turn: they share one transaction, each in its own savepoint.
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
