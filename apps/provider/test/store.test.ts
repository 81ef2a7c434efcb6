// One store contract, one suite, two implementations: SQLite (file in a temp dir) and PostgreSQL (unique schema).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { probePostgres } from '@tollgate/test-support'
import Database from 'better-sqlite3'
import pg from 'pg'
import {
  DemoLedger,
  demoLedgerStore,
  openPostgresStore,
  openSqliteStore,
  ProviderRules,
  purgeExpired,
  type Store,
} from '../src/index.js'
import { attempt, newKey, startTestProvider } from './helpers.js'
import { dropSchemas } from './postgres.js'

const DAY = 86_400_000

// Skips with the reason when PostgreSQL is absent; throws under TOLLGATE_REQUIRE_SERVICES=1.
const { url: PG_URL, skip: pgSkip } = await probePostgres()

interface Backend {
  name: string
  skip: string | undefined
  /** Opens a store; a second open() reaches the same database (another replica). */
  open(): Promise<Store>
  cleanup(): Promise<void>
}

function sqliteBackend(): Backend {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-store-'))
  let n = 0
  let file = ''
  return {
    name: 'SQLite',
    skip: undefined,
    open: async () => openSqliteStore(file),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    // A fresh file per test group; the second open of one group shares it.
    ...{
      get next() {
        n++
        file = join(dir, `s${n}.sqlite`)
        return file
      },
    },
  } as Backend & { next: string }
}

function postgresBackend(): Backend {
  const base = `tollgate_provider_t${process.pid}_${Date.now().toString(36)}`
  let n = 0
  let schema = ''
  const made: string[] = []
  return {
    name: 'PostgreSQL',
    skip: pgSkip,
    open: async () => openPostgresStore({ connectionString: PG_URL, schema, maxConnections: 12 }),
    cleanup: async () => {
      if (made.length > 0) await dropSchemas(...made)
    },
    ...{
      get next() {
        n++
        schema = `${base}_${n}`
        made.push(schema)
        return schema
      },
    },
  } as Backend & { next: string }
}

const claimOf = (key: string, owner: string, nowMs: number, leaseMs = 10_000, fingerprint = 'fp') => ({
  key,
  fingerprint,
  operation: 'refund' as const,
  targetRef: 'ch_1',
  owner,
  nowMs,
  leaseMs,
})
const succeeded = (key: string) => ({
  status: 'succeeded' as const,
  result: { idempotency_key: key, status: 'succeeded' },
  refusal: null,
})

for (const backend of [sqliteBackend(), postgresBackend()] as (Backend & { next: string })[]) {
  describe(`store contract on ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store
    before(async () => {
      void backend.next
      store = await backend.open()
    })
    after(async () => {
      await store?.close()
      await backend.cleanup()
    })

    test('the first claim of a key wins; a second sees the running row', async () => {
      assert.deepEqual(await store.claim(claimOf('k1', 'a', 1000)), { kind: 'claimed', recovering: false })
      const second = await store.claim(claimOf('k1', 'b', 1001))
      assert.equal(second.kind, 'exists')
      assert.equal(second.kind === 'exists' && second.row.status, 'running')
      assert.equal(second.kind === 'exists' && second.row.owner, 'a')
    })

    test('finish records the outcome; only the owner can finish', async () => {
      await store.claim(claimOf('k2', 'a', 1000))
      assert.equal(await store.finish('k2', 'intruder', succeeded('k2'), 1100), false)
      assert.equal(await store.finish('k2', 'a', succeeded('k2'), 1100), true)
      const row = await store.get('k2')
      assert.equal(row?.status, 'succeeded')
      assert.deepEqual(row?.result, { idempotency_key: 'k2', status: 'succeeded' })
      assert.equal(row?.updatedAtMs, 1100)
      assert.equal(await store.finish('k2', 'a', succeeded('k2'), 1200), false)
    })

    test('an expired lease is taken over as recovering; the old owner can no longer finish', async () => {
      await store.claim(claimOf('k4', 'dead', 1000, 50))
      assert.equal((await store.claim(claimOf('k4', 'b', 1049))).kind, 'exists')
      assert.deepEqual(await store.claim(claimOf('k4', 'b', 1050)), { kind: 'claimed', recovering: true })
      assert.equal(await store.finish('k4', 'dead', succeeded('k4'), 1060), false)
      assert.equal(await store.finish('k4', 'b', succeeded('k4'), 1060), true)
    })

    test('a claim with other parameters is never taken over, even when its lease expired', async () => {
      await store.claim(claimOf('k5', 'dead', 1000, 1))
      const other = await store.claim(claimOf('k5', 'b', 5000, 10, 'other-fp'))
      assert.equal(other.kind, 'exists')
    })

    test('abandon ends the lease at once; release forgets the key', async () => {
      await store.claim(claimOf('k6', 'a', 1000))
      await store.abandon('k6', 'a')
      assert.deepEqual(await store.claim(claimOf('k6', 'b', 1001)), { kind: 'claimed', recovering: true })
      await store.release('k6', 'b')
      assert.equal(await store.get('k6'), undefined)
      assert.deepEqual(await store.claim(claimOf('k6', 'c', 1002)), { kind: 'claimed', recovering: false })
    })

    test('settle moves pending to final once', async () => {
      await store.claim(claimOf('k7', 'a', 1000))
      await store.finish('k7', 'a', { status: 'pending', result: { status: 'pending' }, refusal: null }, 1000)
      assert.equal(await store.settle('k7', succeeded('k7'), 2000), true)
      assert.equal(await store.settle('k7', succeeded('k7'), 2001), false)
      const row = await store.get('k7')
      assert.deepEqual([row?.status, row?.result, row?.updatedAtMs], ['succeeded', succeeded('k7').result, 2000])
    })

    test('20 concurrent claims of one key from two store instances (replicas): exactly one wins', async () => {
      const replica = await backend.open()
      try {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? store : replica).claim(claimOf('k8', `o${i}`, 1000))),
        )
        assert.equal(results.filter((r) => r.kind === 'claimed').length, 1)
      } finally {
        await replica.close()
      }
    })

    test('ledger: a keyed mutation happens once and replays; mutations of one document serialize', async () => {
      await demoLedgerStore(store).seed([{ kind: 'counter', ref: 'c1', doc: { n: 0 } }])
      await demoLedgerStore(store).seed([{ kind: 'counter', ref: 'c1', doc: { n: 99 } }]) // seeding never overwrites
      const bump = (doc: Record<string, unknown> | undefined) => {
        const n = Number(doc?.n) + 1
        return { doc: { n }, outcome: { n } }
      }
      const first = await demoLedgerStore(store).apply('lk1', 'counter', 'c1', bump)
      const again = await demoLedgerStore(store).apply('lk1', 'counter', 'c1', bump)
      assert.deepEqual(first, { outcome: { n: 1 }, replayed: false })
      assert.deepEqual(again, { outcome: { n: 1 }, replayed: true })
      const replica = await backend.open()
      try {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            demoLedgerStore(i % 2 === 0 ? store : replica).apply(`lk-${i}`, 'counter', 'c1', bump),
          ),
        )
      } finally {
        await replica.close()
      }
      assert.deepEqual(await demoLedgerStore(store).get('counter', 'c1'), { n: 21 })
      assert.deepEqual(await demoLedgerStore(store).lookup('lk1'), { n: 1 })
      assert.equal(await demoLedgerStore(store).lookup('lk-none'), undefined)
      const rewritten = await demoLedgerStore(store).rewrite('lk1', 'counter', 'c1', (doc) => ({
        doc: { n: Number(doc?.n) * 10 },
        outcome: { n: 'final' },
      }))
      assert.deepEqual(rewritten, { n: 'final' })
      assert.deepEqual(await demoLedgerStore(store).lookup('lk1'), { n: 'final' })
      assert.deepEqual(await demoLedgerStore(store).list('counter'), [{ n: 210 }])
    })

    test('ledger: rows put by a keyed mutation are written with it, once; a rewrite can replace one', async () => {
      await demoLedgerStore(store).seed([{ kind: 'charge', ref: 'ch_p', doc: { total: 0 } }])
      const add = (amount: number, row: string) => (doc: Record<string, unknown> | undefined) => ({
        doc: { total: Number(doc?.total) + amount },
        put: [{ kind: 'row:ch_p', ref: row, doc: { amount, state: 'pending' } }],
        outcome: { row },
      })
      await demoLedgerStore(store).apply('pk1', 'charge', 'ch_p', add(5, 'r2'))
      await demoLedgerStore(store).apply('pk2', 'charge', 'ch_p', add(7, 'r1'))
      // A replay of pk1 puts nothing again.
      assert.deepEqual(await demoLedgerStore(store).apply('pk1', 'charge', 'ch_p', add(5, 'r3')), {
        outcome: { row: 'r2' },
        replayed: true,
      })
      assert.deepEqual(await demoLedgerStore(store).get('charge', 'ch_p'), { total: 12 })
      assert.deepEqual(await demoLedgerStore(store).list('row:ch_p'), [
        { amount: 7, state: 'pending' },
        { amount: 5, state: 'pending' },
      ])
      // The document and a kind's rows in one read: the same as get and list.
      assert.deepEqual(await demoLedgerStore(store).getWithList('charge', 'ch_p', 'row:ch_p'), {
        doc: { total: 12 },
        list: [
          { amount: 7, state: 'pending' },
          { amount: 5, state: 'pending' },
        ],
      })
      assert.deepEqual(await demoLedgerStore(store).getWithList('charge', 'ch_none', 'row:ch_p'), {
        doc: undefined,
        list: [
          { amount: 7, state: 'pending' },
          { amount: 5, state: 'pending' },
        ],
      })
      assert.deepEqual(await demoLedgerStore(store).getWithList('charge', 'ch_p', 'row:ch_none'), {
        doc: { total: 12 },
        list: [],
      })
      // alsoRead hands the mutation other documents, in order, read with this one (undefined where missing).
      let related: unknown
      await demoLedgerStore(store).apply(
        'pk-related',
        'charge',
        'ch_p',
        (_doc, _prior, docs) => {
          related = docs
          return { outcome: 'seen', record: false }
        },
        {
          alsoRead: [
            { kind: 'row:ch_p', ref: 'r1' },
            { kind: 'row:ch_p', ref: 'none' },
          ],
        },
      )
      assert.deepEqual(related, [{ amount: 7, state: 'pending' }, undefined])
      // A mutation that throws writes neither its document nor its rows.
      await assert.rejects(
        demoLedgerStore(store).apply('pk3', 'charge', 'ch_p', () => {
          throw new Error('refused by the mutation')
        }),
      )
      assert.equal(await demoLedgerStore(store).lookup('pk3'), undefined)
      let seen: unknown
      await demoLedgerStore(store).rewrite('pk1', 'row:ch_p', 'r2', (row, prior) => {
        seen = prior
        return { doc: { ...row, state: 'settled' }, outcome: { row: 'r2', settled: true } }
      })
      // The rewrite saw the key's recorded outcome.
      assert.deepEqual(seen, { row: 'r2' })
      assert.deepEqual(await demoLedgerStore(store).get('row:ch_p', 'r2'), { amount: 5, state: 'settled' })
      assert.deepEqual(await demoLedgerStore(store).lookup('pk1'), { row: 'r2', settled: true })
    })

    test("ledger: a mutation can finish the key's claim in its own transaction, only for the claim's owner", async () => {
      const ledger = demoLedgerStore(store)
      await ledger.seed([{ kind: 'charge', ref: 'ch_f', doc: { total: 0 } }])
      const add = (amount: number) => (doc: Record<string, unknown> | undefined) => ({
        doc: { total: Number(doc?.total) + amount },
        outcome: { added: amount },
      })
      const recordOf = (key: string) => (outcome: { added: number }) => ({
        outcome: { status: 'succeeded' as const, result: { key, ...outcome }, refusal: null },
        nowMs: 5000,
      })
      await store.claim(claimOf('fk1', 'a', 1000))
      const done = await ledger.apply('fk1', 'charge', 'ch_f', add(3), {
        finish: { owner: 'a', recordOf: recordOf('fk1') },
      })
      assert.deepEqual(done, { outcome: { added: 3 }, replayed: false, finished: true })
      const row = await store.get('fk1')
      assert.equal(row?.status, 'succeeded')
      assert.deepEqual(row?.result, { key: 'fk1', added: 3 })
      assert.equal(row?.updatedAtMs, 5000)
      // Another owner's claim: the change commits (the key's ledger outcome with it), the claim stays running.
      await store.claim(claimOf('fk2', 'b', 1000))
      const lost = await ledger.apply('fk2', 'charge', 'ch_f', add(4), {
        finish: { owner: 'a', recordOf: recordOf('fk2') },
      })
      assert.deepEqual(lost, { outcome: { added: 4 }, replayed: false, finished: false })
      assert.equal((await store.get('fk2'))?.status, 'running')
      // recordOf answering undefined finishes nothing; a replay finishes nothing.
      await store.claim(claimOf('fk3', 'a', 1000))
      const none = await ledger.apply('fk3', 'charge', 'ch_f', add(5), {
        finish: { owner: 'a', recordOf: () => undefined },
      })
      assert.deepEqual(none, { outcome: { added: 5 }, replayed: false })
      assert.equal((await store.get('fk3'))?.status, 'running')
      const replay = await ledger.apply('fk3', 'charge', 'ch_f', add(5), {
        finish: { owner: 'a', recordOf: recordOf('fk3') },
      })
      assert.deepEqual(replay, { outcome: { added: 5 }, replayed: true })
      assert.equal((await store.get('fk3'))?.status, 'running')
      // Concurrent finishing mutations of distinct documents (one statement on PostgreSQL): each finishes its own key.
      const refs = Array.from({ length: 8 }, (_, i) => `ch_g${i}`)
      await ledger.seed(refs.map((ref) => ({ kind: 'charge', ref, doc: { total: 0 } })))
      await Promise.all(refs.map((ref) => store.claim(claimOf(`gk-${ref}`, 'a', 1000))))
      const all = await Promise.all(
        refs.map((ref) =>
          ledger.apply(`gk-${ref}`, 'charge', ref, add(1), {
            finish: {
              owner: 'a',
              recordOf: recordOf(`gk-${ref}`),
            },
          }),
        ),
      )
      assert.deepEqual(
        all.map((r) => r.finished),
        refs.map(() => true),
      )
      for (const ref of refs) assert.equal((await store.get(`gk-${ref}`))?.status, 'succeeded')
      assert.equal((await ledger.get('charge', 'ch_f'))?.total, 12)
    })

    test('rules over the demo ledger: a refund is one write (on PostgreSQL once the charge is known, else two)', async () => {
      const ledger = demoLedgerStore(store)
      const billing = new DemoLedger(ledger)
      await billing.seed()
      // Counts the store's own claims and finishes (a one-write refund makes neither). On PostgreSQL the first refund of
      // a charge this process does not know yet claims, then finishes with its ledger write; the next claims, changes
      // and finishes in one statement. SQLite reads the charge inside that write's transaction: every refund is one.
      let claims = 0
      let finishes = 0
      const counted: Store = {
        ...store,
        claim: (r) => {
          claims++
          return store.claim(r)
        },
        finish: (...args) => {
          finishes++
          return store.finish(...args)
        },
      }
      const rules = new ProviderRules({ store: counted, billing, sameTransaction: billing })
      const refundOf = (key: string) => ({
        idempotency_key: key,
        request: {
          transaction_ref: 'ch_1001',
          amount: { amount_minor: 5, currency: 'USD' },
          reason: 'goodwill',
          dry_run: false,
        },
      })
      const first = await rules.refund(refundOf('rk1'))
      assert.equal(first.ok, true, JSON.stringify(first))
      assert.equal((await store.get('rk1'))?.status, 'succeeded')
      assert.deepEqual([claims, finishes], store.kind === 'postgres' ? [1, 0] : [0, 0])
      const second = await rules.refund(refundOf('rk2'))
      assert.equal(second.ok, true, JSON.stringify(second))
      assert.equal((await store.get('rk2'))?.status, 'succeeded')
      assert.deepEqual([claims, finishes], store.kind === 'postgres' ? [1, 0] : [0, 0])
      // Replays answer the first answers' bytes, whichever path wrote them.
      assert.deepEqual(await rules.refund(refundOf('rk1')), first)
      assert.deepEqual(await rules.refund(refundOf('rk2')), second)
      assert.equal((await ledger.get('transaction', 'ch_1001'))?._refunded_minor, 10)
    })

    test('ledger: applyClaiming writes a new key, its change and both outcomes at once, or nothing', async () => {
      const ledger = demoLedgerStore(store)
      await ledger.seed([{ kind: 'charge', ref: 'ch_c', doc: { total: 0 } }])
      const add = (amount: number) => (doc: Record<string, unknown> | undefined) =>
        doc === undefined
          ? { outcome: { added: 0 }, record: false }
          : {
              doc: { total: Number(doc.total) + amount },
              put: [{ kind: 'row:ch_c', ref: `r${amount}`, doc: { amount } }],
              outcome: { added: amount },
            }
      const recordOf = (outcome: { added: number }) => ({
        outcome: { status: 'succeeded' as const, result: { ...outcome }, refusal: null },
        nowMs: 7000,
      })
      // The usual path first, so this process knows the charge (PostgreSQL answers only from known documents).
      await store.claim(claimOf('ck0', 'a', 1000))
      await ledger.apply('ck0', 'charge', 'ch_c', add(1), { finish: { owner: 'a', recordOf } })
      const done = await ledger.applyClaiming(claimOf('ck1', 'o1', 1000), 'charge', 'ch_c', add(2), {
        recordOf,
      })
      assert.deepEqual(done, { outcome: { added: 2 } })
      const row = await store.get('ck1')
      assert.equal(row?.status, 'succeeded')
      assert.equal(row?.owner, 'o1')
      assert.equal(row?.leaseUntilMs, 0)
      assert.deepEqual(row?.result, { added: 2 })
      assert.deepEqual(await ledger.lookup('ck1'), { added: 2 })
      assert.deepEqual(await ledger.get('charge', 'ch_c'), { total: 3 })
      assert.deepEqual(await ledger.get('row:ch_c', 'r2'), { amount: 2 })
      // A key the server has (running or final), a key the ledger has, a mutation that records nothing, recordOf
      // answering undefined: nothing is written.
      await store.claim(claimOf('ck2', 'other', 1000))
      const unchanged = async () => {
        assert.deepEqual(await ledger.get('charge', 'ch_c'), { total: 3 })
        assert.equal(await ledger.get('row:ch_c', 'r4'), undefined)
      }
      assert.equal(
        await ledger.applyClaiming(claimOf('ck2', 'o2', 1000), 'charge', 'ch_c', add(4), {
          recordOf,
        }),
        undefined,
      )
      assert.equal((await store.get('ck2'))?.owner, 'other')
      assert.equal(
        await ledger.applyClaiming(claimOf('ck1', 'o3', 1000), 'charge', 'ch_c', add(4), {
          recordOf,
        }),
        undefined,
      )
      await ledger.apply('lk-only', 'charge', 'ch_none', () => ({ outcome: 'x' }))
      assert.equal(
        await ledger.applyClaiming(claimOf('lk-only', 'o4', 1000), 'charge', 'ch_c', add(4), {
          recordOf,
        }),
        undefined,
      )
      assert.equal(await store.get('lk-only'), undefined)
      assert.equal(
        await ledger.applyClaiming(claimOf('ck5', 'o5', 1000), 'charge', 'ch_none', add(4), {
          recordOf,
        }),
        undefined,
      )
      assert.equal(
        await ledger.applyClaiming(claimOf('ck6', 'o6', 1000), 'charge', 'ch_c', add(4), { recordOf: () => undefined }),
        undefined,
      )
      for (const key of ['ck5', 'ck6']) assert.equal(await store.get(key), undefined)
      await unchanged()
      // Another replica changes the charge: this process's knowledge is stale. PostgreSQL writes nothing (the usual
      // path then reads); SQLite reads inside its transaction and goes through. Either way the total is exact.
      const replica = await backend.open()
      try {
        await store.claim(claimOf('ck7', 'r', 1000))
        await demoLedgerStore(replica).apply('ck7', 'charge', 'ch_c', add(10))
        const stale = await ledger.applyClaiming(claimOf('ck8', 'o8', 1000), 'charge', 'ch_c', add(20), {
          recordOf,
        })
        if (store.kind === 'postgres') {
          assert.equal(stale, undefined)
          assert.equal(await store.get('ck8'), undefined)
          assert.deepEqual(await ledger.get('charge', 'ch_c'), { total: 13 })
        } else {
          assert.deepEqual(stale, { outcome: { added: 20 } })
          assert.deepEqual(await ledger.get('charge', 'ch_c'), { total: 33 })
        }
        // Ten keys, each sent from both replicas at once: every key is written once, every change counted once.
        const before = Number((await ledger.get('charge', 'ch_c'))?.total)
        await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            ledger.apply(`prime-${i}`, 'charge', 'ch_c', () => ({ outcome: 0, record: false })),
          ),
        )
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            demoLedgerStore(i % 2 === 0 ? store : replica).applyClaiming(
              claimOf(`cc-${i % 10}`, `owner-${i}`, 1000),
              'charge',
              'ch_c',
              (doc) => ({ doc: { total: Number(doc?.total) + 100 }, outcome: { added: 100 } }),
              { recordOf },
            ),
          ),
        )
        const written = results.filter((r) => r !== undefined).length
        for (let k = 0; k < 10; k++) {
          const twice = [results[k], results[k + 10]].filter((r) => r !== undefined).length
          assert.ok(twice <= 1, `key cc-${k} written ${twice} times`)
          if (twice === 1) assert.equal((await store.get(`cc-${k}`))?.status, 'succeeded')
          else assert.equal(await store.get(`cc-${k}`), undefined)
        }
        assert.equal(Number((await ledger.get('charge', 'ch_c'))?.total), before + 100 * written)
      } finally {
        await replica.close()
      }
    })

    test('retention: final keys older than the window are purged, never below 30 days', async () => {
      const now = 100 * DAY
      await store.claim(claimOf('old', 'a', now - 31 * DAY))
      await store.finish('old', 'a', succeeded('old'), now - 31 * DAY)
      await store.claim(claimOf('recent', 'a', now - 29 * DAY))
      await store.finish('recent', 'a', succeeded('recent'), now - 29 * DAY)
      await store.claim(claimOf('old-running', 'a', now - 40 * DAY))
      await assert.rejects(purgeExpired(store, 29, now), RangeError)
      const purged = await purgeExpired(store, 30, now)
      assert.ok(purged >= 1)
      assert.equal(await store.get('old'), undefined)
      assert.equal((await store.get('recent'))?.status, 'succeeded')
      assert.equal((await store.get('old-running'))?.status, 'running')
    })
  })
}

test('SQLite: a file from an earlier build opens and serves; its refunds table is left alone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-old-file-'))
  const file = join(dir, 'old.sqlite')
  try {
    // The keys tables as the build before made them, with a refund recorded in both.
    const old = new Database(file)
    old.exec(`
      CREATE TABLE operations (
        key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, operation TEXT NOT NULL, target_ref TEXT NOT NULL,
        status TEXT NOT NULL, result TEXT, refusal TEXT, owner TEXT NOT NULL, lease_until INTEGER NOT NULL,
        created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      CREATE INDEX operations_updated ON operations(updated_at);
      CREATE TABLE refunds (
        refund_ref TEXT PRIMARY KEY, key TEXT NOT NULL UNIQUE, transaction_ref TEXT NOT NULL,
        amount_minor INTEGER NOT NULL, currency TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL);
      CREATE INDEX refunds_tx ON refunds(transaction_ref);
      INSERT INTO operations VALUES ('kept', 'fp', 'refund', 'ch_1', 'succeeded', '{"refund_ref":"re_1"}', NULL, 'o', 0, 5, 6);
      INSERT INTO refunds VALUES ('re_1', 'kept', 'ch_1', 1, 'USD', 'succeeded', 5);`)
    old.close()
    const store = openSqliteStore(file)
    try {
      assert.deepEqual((await store.get('kept'))?.result, { refund_ref: 're_1' })
      assert.deepEqual(await store.claim(claimOf('new', 'a', 1000)), { kind: 'claimed', recovering: false })
      assert.equal(await store.finish('new', 'a', succeeded('new'), 1100), true)
      assert.equal(await purgeExpired(store, 30, 40 * DAY), 2)
    } finally {
      await store.close()
    }
    const reopened = new Database(file, { readonly: true })
    try {
      assert.deepEqual(reopened.prepare('SELECT refund_ref FROM refunds').pluck().all(), ['re_1'])
    } finally {
      reopened.close()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

describe('the provider over PostgreSQL', { skip: pgSkip }, () => {
  const schema = `tollgate_provider_p${process.pid}_${Date.now().toString(36)}`
  after(() => dropSchemas(schema))

  test('two replicas on one database: 20 concurrent attempts with one key make one refund, keys replay across them', async () => {
    const a = await startTestProvider({ store: { kind: 'postgres', connectionString: PG_URL, schema } })
    const b = await startTestProvider({ store: { kind: 'postgres', connectionString: PG_URL, schema } })
    try {
      const key = newKey()
      const args = {
        idempotency_key: key,
        request: {
          transaction_ref: 'ch_9001',
          amount: { amount_minor: 300, currency: 'USD' },
          reason: 'goodwill',
          dry_run: false,
        },
      }
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          attempt((i % 2 === 0 ? a : b).url, i % 3 === 0 ? 'legacy' : 'modern', 'sr_refund', args),
        ),
      )
      const ok = results.filter((r) => r.isError !== true)
      assert.ok(ok.length >= 1)
      for (const r of ok) assert.deepEqual(r.structuredContent, ok[0]?.structuredContent)
      for (const r of results.filter((x) => x.isError === true)) {
        assert.equal((r.structuredContent?.error as { code: string } | undefined)?.code, 'in_progress')
      }
      const tx = await b.billing.getTransaction('ch_9001')
      assert.equal(
        ((tx?.refunds ?? []) as { idempotency_key: string }[]).filter((r) => r.idempotency_key === key).length,
        1,
      )
      const op = await attempt(b.url, 'v1', 'sr_get_operation', { idempotency_key: key })
      assert.equal(op.structuredContent?.status, 'succeeded')
    } finally {
      await a.stop()
      await b.stop()
    }
  })
})

describe('applyClaiming on PostgreSQL: replicas racing on one charge', { skip: pgSkip }, () => {
  const schema = `tollgate_provider_c${process.pid}_${Date.now().toString(36)}`
  after(() => dropSchemas(schema))

  test('a refund on a charge another replica changed: the one statement, then claim, read and write', async () => {
    const open = () => openPostgresStore({ connectionString: PG_URL, schema, maxConnections: 4 })
    const [a, b] = [await open(), await open()]
    // Counts the statements the stores send (every one goes through pg.Pool's query).
    const query = pg.Pool.prototype.query
    let statements = 0
    pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
      statements++
      return (query as (...a: unknown[]) => unknown).apply(this, args)
    } as typeof query
    try {
      const billing = [new DemoLedger(demoLedgerStore(a)), new DemoLedger(demoLedgerStore(b))] as const
      await billing[0].seed()
      const [onA, onB] = [a, b].map((store, i) => {
        const ledger = billing[i] as DemoLedger
        return new ProviderRules({ store, billing: ledger, sameTransaction: ledger })
      })
      let n = 0
      const refund = async (rules: ProviderRules | undefined) => {
        const before = statements
        const answer = await rules?.refund({
          idempotency_key: `stale-${++n}`,
          request: {
            transaction_ref: 'ch_1001',
            amount: { amount_minor: 1, currency: 'USD' },
            reason: 'goodwill',
            dry_run: false,
          },
        })
        assert.equal(answer?.ok, true, JSON.stringify(answer))
        return statements - before
      }
      await refund(onA) // A learns the charge (and its customer) on the usual path
      assert.equal(await refund(onA), 1, 'a known charge: one statement')
      await refund(onB) // B changes it: A's knowledge is stale
      // The statement finds the charge moved and writes nothing; A forgets it, so the usual path reads before writing
      // (a write from the stale version would fail and cost one more).
      assert.equal(await refund(onA), 4, 'one statement, claim, read, write')
      assert.equal(await refund(onA), 1, 'known again: one statement')
      // Five refunds through two replicas, each recorded once.
      assert.equal(((await billing[0].getTransaction('ch_1001'))?.refunds as unknown[] | undefined)?.length, 5)
    } finally {
      pg.Pool.prototype.query = query
      await a.close()
      await b.close()
    }
  })

  test('two statements that read one version of the charge: the first writes, the second writes nothing', async () => {
    const open = () => openPostgresStore({ connectionString: PG_URL, schema, maxConnections: 4 })
    const [a, b] = [await open(), await open()]
    const holder = new pg.Client({ connectionString: PG_URL })
    await holder.connect()
    try {
      await demoLedgerStore(a).seed([{ kind: 'charge', ref: 'ch_r', doc: { total: 0 } }])
      // Both replicas learn the charge at one version: an apply reads it (and remembers it), and a mutation that
      // throws then writes nothing.
      const learn = () => {
        throw new Error('only reading')
      }
      for (const s of [a, b]) await assert.rejects(demoLedgerStore(s).apply('learn', 'charge', 'ch_r', learn))
      // A third session holds the charge's row lock, so both statements start (and take their snapshots) before
      // either can change it; then it lets go, changing nothing.
      await holder.query('BEGIN')
      await holder.query(`SELECT 1 FROM ${schema}.ledger_docs WHERE kind = 'charge' AND ref = 'ch_r' FOR UPDATE`)
      const bump = (doc: Record<string, unknown> | undefined) => ({
        doc: { total: Number(doc?.total) + 100 },
        outcome: 1,
      })
      const recordOf = () => ({ outcome: { status: 'succeeded' as const, result: {}, refusal: null }, nowMs: 1 })
      const racing = [a, b].map((s, i) =>
        demoLedgerStore(s).applyClaiming(claimOf(`race-${i}`, `o${i}`, 1000), 'charge', 'ch_r', bump, { recordOf }),
      )
      const waiting = async () =>
        Number(
          (
            await holder.query(
              "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%ledger_docs%'",
            )
          ).rows[0]?.n,
        )
      for (let i = 0; i < 200 && (await waiting()) < 2; i++) await new Promise((r) => setTimeout(r, 10))
      assert.equal(await waiting(), 2, 'both statements wait for the charge')
      await holder.query('COMMIT')
      const results = await Promise.all(racing)
      assert.equal(results.filter((r) => r !== undefined).length, 1)
      assert.deepEqual(await demoLedgerStore(a).get('charge', 'ch_r'), { total: 100 })
      const written = await Promise.all([a.get('race-0'), b.get('race-1')])
      assert.equal(written.filter((r) => r !== undefined).length, 1)
    } finally {
      await holder.end()
      await a.close()
      await b.close()
    }
  })
})
