// One store contract, one suite, two implementations: SQLite (file in a temp dir) and PostgreSQL (unique schema).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { probePostgres } from '@tollgate/test-support'
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
      if (made.length === 0) return
      const c = new pg.Client({ connectionString: PG_URL })
      await c.connect()
      for (const s of made) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`)
      await c.end()
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
const refund = (ref: string, status: 'pending' | 'succeeded' = 'succeeded') => ({
  refundRef: ref,
  transactionRef: 'ch_1',
  amountMinor: 700,
  currency: 'USD',
  status,
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

    test('finish records the outcome and the refund together; only the owner can finish', async () => {
      await store.claim(claimOf('k2', 'a', 1000))
      assert.equal(await store.finish('k2', 'intruder', succeeded('k2'), refund('re_k2'), 1100), false)
      assert.equal(await store.finish('k2', 'a', succeeded('k2'), refund('re_k2'), 1100), true)
      const row = await store.get('k2')
      assert.equal(row?.status, 'succeeded')
      assert.deepEqual(row?.result, { idempotency_key: 'k2', status: 'succeeded' })
      assert.equal(row?.updatedAtMs, 1100)
      assert.deepEqual(
        (await store.refundsFor('ch_1')).map((r) => r.refundRef),
        ['re_k2'],
      )
      assert.equal(await store.finish('k2', 'a', succeeded('k2'), undefined, 1200), false)
    })

    test('the key and its refund are one transaction: a failing refund insert leaves no outcome', async () => {
      await store.claim(claimOf('k3', 'a', 1000))
      // re_k2 exists already: the refund insert fails, so the outcome must roll back with it.
      await assert.rejects(store.finish('k3', 'a', succeeded('k3'), refund('re_k2'), 1100), {
        code: 'ERR_PROVIDER_STORE',
      })
      assert.equal((await store.get('k3'))?.status, 'running')
    })

    test('an expired lease is taken over as recovering; the old owner can no longer finish', async () => {
      await store.claim(claimOf('k4', 'dead', 1000, 50))
      assert.equal((await store.claim(claimOf('k4', 'b', 1049))).kind, 'exists')
      assert.deepEqual(await store.claim(claimOf('k4', 'b', 1050)), { kind: 'claimed', recovering: true })
      assert.equal(await store.finish('k4', 'dead', succeeded('k4'), undefined, 1060), false)
      assert.equal(await store.finish('k4', 'b', succeeded('k4'), undefined, 1060), true)
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

    test('settle moves pending to final once, and updates the refund record', async () => {
      await store.claim(claimOf('k7', 'a', 1000))
      await store.finish(
        'k7',
        'a',
        { status: 'pending', result: { status: 'pending' }, refusal: null },
        refund('re_k7', 'pending'),
        1000,
      )
      assert.equal(await store.settle('k7', succeeded('k7'), 2000), true)
      assert.equal(await store.settle('k7', succeeded('k7'), 2001), false)
      assert.equal((await store.get('k7'))?.status, 'succeeded')
      assert.equal((await store.refundsFor('ch_1')).find((r) => r.refundRef === 're_k7')?.status, 'succeeded')
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
      const recordOf = (key: string, ref: string) => (outcome: { added: number }) => ({
        outcome: { status: 'succeeded' as const, result: { key, ...outcome }, refusal: null },
        refund: { ...refund(ref), transactionRef: 'ch_f' },
        nowMs: 5000,
      })
      await store.claim(claimOf('fk1', 'a', 1000))
      const done = await ledger.apply('fk1', 'charge', 'ch_f', add(3), {
        finish: { owner: 'a', recordOf: recordOf('fk1', 're_fk1') },
      })
      assert.deepEqual(done, { outcome: { added: 3 }, replayed: false, finished: true })
      const row = await store.get('fk1')
      assert.equal(row?.status, 'succeeded')
      assert.deepEqual(row?.result, { key: 'fk1', added: 3 })
      assert.equal(row?.updatedAtMs, 5000)
      assert.deepEqual(
        (await store.refundsFor('ch_f')).map((r) => r.refundRef),
        ['re_fk1'],
      )
      // Another owner's claim: the change commits (the key's ledger outcome with it), the claim stays running.
      await store.claim(claimOf('fk2', 'b', 1000))
      const lost = await ledger.apply('fk2', 'charge', 'ch_f', add(4), {
        finish: { owner: 'a', recordOf: recordOf('fk2', 're_fk2') },
      })
      assert.deepEqual(lost, { outcome: { added: 4 }, replayed: false, finished: false })
      assert.equal((await store.get('fk2'))?.status, 'running')
      assert.deepEqual(
        (await store.refundsFor('ch_f')).map((r) => r.refundRef),
        ['re_fk1'],
      )
      // recordOf answering undefined finishes nothing; a replay finishes nothing.
      await store.claim(claimOf('fk3', 'a', 1000))
      const none = await ledger.apply('fk3', 'charge', 'ch_f', add(5), {
        finish: { owner: 'a', recordOf: () => undefined },
      })
      assert.deepEqual(none, { outcome: { added: 5 }, replayed: false })
      assert.equal((await store.get('fk3'))?.status, 'running')
      const replay = await ledger.apply('fk3', 'charge', 'ch_f', add(5), {
        finish: { owner: 'a', recordOf: recordOf('fk3', 're_fk3') },
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
              recordOf: (o: { added: number }) => ({ ...recordOf(`gk-${ref}`, `re_${ref}`)(o), refund: undefined }),
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

    test("rules over the demo ledger: on PostgreSQL a refund's outcome commits with its ledger change, in no finish of its own", async () => {
      const ledger = demoLedgerStore(store)
      const billing = new DemoLedger(ledger)
      await billing.seed()
      // Counts the store's own finishes. On PostgreSQL a refund that succeeds and replays without one was finished
      // with its change; on SQLite the server still finishes it (one group commit either way).
      let finishes = 0
      const counted: Store = {
        ...store,
        finish: (...args) => {
          finishes++
          return store.finish(...args)
        },
      }
      const rules = new ProviderRules({ store: counted, billing })
      const request = { transaction_ref: 'ch_1001', amount: { amount_minor: 5, currency: 'USD' }, reason: 'goodwill' }
      const args = { idempotency_key: 'rk1', request: { ...request, dry_run: false } }
      const first = await rules.refund(args)
      assert.equal(first.ok, true, JSON.stringify(first))
      assert.equal((await store.get('rk1'))?.status, 'succeeded')
      assert.deepEqual(await rules.refund(args), first)
      assert.equal(finishes, store.kind === 'postgres' ? 0 : 1)
    })

    test('retention: final keys older than the window are purged, never below 30 days', async () => {
      const now = 100 * DAY
      await store.claim(claimOf('old', 'a', now - 31 * DAY))
      await store.finish('old', 'a', succeeded('old'), refund('re_old'), now - 31 * DAY)
      await store.claim(claimOf('recent', 'a', now - 29 * DAY))
      await store.finish('recent', 'a', succeeded('recent'), undefined, now - 29 * DAY)
      await store.claim(claimOf('old-running', 'a', now - 40 * DAY))
      await assert.rejects(purgeExpired(store, 29, now), RangeError)
      const purged = await purgeExpired(store, 30, now)
      assert.ok(purged >= 1)
      assert.equal(await store.get('old'), undefined)
      assert.equal(
        (await store.refundsFor('ch_1')).some((r) => r.refundRef === 're_old'),
        false,
      )
      assert.equal((await store.get('recent'))?.status, 'succeeded')
      assert.equal((await store.get('old-running'))?.status, 'running')
    })
  })
}

describe('the provider over PostgreSQL', { skip: pgSkip }, () => {
  const schema = `tollgate_provider_p${process.pid}_${Date.now().toString(36)}`
  after(async () => {
    const c = new pg.Client({ connectionString: PG_URL })
    await c.connect()
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await c.end()
  })

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
