// A claim this process gave up on because its store failed is not held by its own lease: once the store takes writes
// again the process ends that lease itself, so a retry (on any replica) resumes the key through billing.lookup within
// a second or two instead of answering in_progress for the whole lease. And every in_progress answer says when to
// come back (Retry-After) on both bindings.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  type BillingPort,
  DemoLedger,
  demoLedgerStore,
  openSqliteStore,
  ProviderRules,
  type RefundCommand,
  type Store,
  StoreError,
} from '../src/index.js'
import { delegateBilling, startTestProvider } from './helpers.js'
import { mcpBinding, outageKey, restBinding } from './outage-harness.js'

const coded = (code: string) => Object.assign(new Error('x'), { code })
const outage = () => new StoreError('PostgreSQL store operation failed', { cause: coded('57P01') })

/** Waits until `done()` holds, polling (never a fixed sleep); fails after `limitMs`. */
async function until(done: () => boolean, what: string, limitMs = 20_000): Promise<void> {
  const started = performance.now()
  while (!done()) {
    if (performance.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

const refundArgs = (key: string) => ({
  idempotency_key: key,
  request: {
    transaction_ref: 'ch_9100',
    amount: { amount_minor: 1, currency: 'USD' },
    reason: 'goodwill',
    dry_run: false,
  },
})

test('a claim whose finish and abandon failed in an outage is ended once the store is back: another replica resumes it through lookup', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-failed-claims-'))
  const store = openSqliteStore(join(dir, 's.sqlite'))
  try {
    const ledger = new DemoLedger(demoLedgerStore(store))
    await ledger.seed()
    let refunds = 0
    // Refunds outside the store's transaction: the rules record the outcome with their own finish.
    const billing: BillingPort = delegateBilling(ledger, {
      refund: async (key: string, command: RefundCommand) => {
        refunds++
        return ledger.refund(key, command)
      },
    })
    // Replica A's view of the store: down for writes after its claim (finish, abandon), as when the primary dies
    // between a refund's claim and its finish. Replica B reaches the store (the promoted standby) all along.
    let down = false
    let abandons = 0
    const failing: Store = Object.assign(Object.create(store) as Store, {
      finish: async (...args: Parameters<Store['finish']>) => {
        if (down) throw outage()
        return store.finish(...args)
      },
      abandon: async (...args: Parameters<Store['abandon']>) => {
        abandons++
        if (down) throw outage()
        return store.abandon(...args)
      },
      claim: async (...args: Parameters<Store['claim']>) => {
        const claimed = await store.claim(...args)
        down = true
        return claimed
      },
    })
    const a = new ProviderRules({ store: failing, billing, inProgressLeaseMs: 60_000, endLeaseRetryMs: 20 })
    const b = new ProviderRules({ store, billing, inProgressLeaseMs: 60_000 })
    const key = outageKey('failed-claim')
    const first = await a.refund(refundArgs(key))
    assert.equal(!first.ok && first.body.error.code, 'unavailable')
    assert.equal(a.unendedClaims, 1, 'the claim whose lease could not be ended is kept')
    // While A cannot write, its claim holds the key: B answers in_progress, with a Retry-After.
    const held = await b.refund(refundArgs(key))
    assert.equal(!held.ok && held.body.error.code, 'in_progress')
    assert.equal(!held.ok && held.retryAfterSeconds, 1)
    // The retries go on failing while the store is down (one statement a round), then succeed once it is back.
    await until(() => abandons >= 3, 'retries during the outage')
    assert.equal(a.unendedClaims, 1)
    down = false
    await until(() => a.unendedClaims === 0, "A's kept claim to be ended")
    // With a 60 s lease, the key would answer in_progress here for a minute.
    const retry = await b.refund(refundArgs(key))
    assert.equal(retry.ok && retry.body.status, 'succeeded')
    assert.equal(refunds, 1, 'the retry found the refund through lookup, not by refunding again')
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test("a kept claim is ended only under its owner: another replica's claim of the key is never touched", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-failed-claims-'))
  const store = openSqliteStore(join(dir, 's.sqlite'))
  try {
    const ledger = new DemoLedger(demoLedgerStore(store))
    await ledger.seed()
    let down = false
    let entered: () => void = () => {}
    let release: () => void = () => {}
    const billing: BillingPort = delegateBilling(ledger, {
      refund: async (key: string, command: RefundCommand) => {
        // A's run: its billing system's database is down too (the call's fate unknown to A).
        if (down) throw coded('ECONNREFUSED')
        // B's run: held inside billing until the test lets it go.
        entered()
        await new Promise<void>((r) => {
          release = r
        })
        return ledger.refund(key, command)
      },
    })
    const failing: Store = Object.assign(Object.create(store) as Store, {
      finish: async (...args: Parameters<Store['finish']>) => {
        if (down) throw outage()
        return store.finish(...args)
      },
      abandon: async (...args: Parameters<Store['abandon']>) => {
        if (down) throw outage()
        return store.abandon(...args)
      },
    })
    // A's lease is 1 ms: its claim lapses at once, so B takes the key over while A still keeps its claim to end.
    const a = new ProviderRules({ store: failing, billing, inProgressLeaseMs: 1, endLeaseRetryMs: 20 })
    const b = new ProviderRules({ store, billing, inProgressLeaseMs: 60_000 })
    const key = outageKey('owner')
    down = true
    const first = await a.refund(refundArgs(key))
    assert.equal(!first.ok && first.body.error.code, 'unavailable')
    assert.equal(a.unendedClaims, 1)
    down = false
    const inside = new Promise<void>((r) => {
      entered = r
    })
    const lapsed = Date.now() + 2
    await until(() => Date.now() > lapsed, "A's 1 ms lease to lapse")
    const running = b.refund(refundArgs(key))
    await inside
    // B runs the key now; A's kept claim is ended meanwhile — its owner no longer matches, so B's lease stays.
    await until(() => a.unendedClaims === 0, "A's kept claim to be tried")
    const row = await store.get(key)
    assert.equal(row?.status, 'running')
    assert.ok((row?.leaseUntilMs ?? 0) > Date.now() + 30_000, "B's lease is intact")
    release()
    const done = await running
    assert.equal(done.ok && done.body.status, 'succeeded')
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('in_progress carries Retry-After on REST (409) and on MCP', async () => {
  let entered: () => void = () => {}
  let release: () => void = () => {}
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-failed-claims-'))
  const ledgerStore = openSqliteStore(join(dir, 'ledger.sqlite'))
  const ledger = new DemoLedger(demoLedgerStore(ledgerStore))
  await ledger.seed()
  const billing = delegateBilling(ledger, {
    refund: async (key: string, command: RefundCommand) => {
      entered()
      await new Promise<void>((r) => {
        release = r
      })
      return ledger.refund(key, command)
    },
  })
  const p = await startTestProvider({ billing })
  const rest = restBinding('rest', p)
  const modern = await mcpBinding('modern', p, 'modern')
  const legacy = await mcpBinding('legacy', p, 'legacy')
  try {
    for (const binding of [rest, modern, legacy]) {
      const key = outageKey(binding.name)
      const inside = new Promise<void>((r) => {
        entered = r
      })
      const first = binding === rest ? modern.refund(key, 'ch_9100') : rest.refund(key, 'ch_9100')
      await inside
      const second = await binding.refund(key, 'ch_9100')
      assert.equal(second.code, 'in_progress', binding.name)
      assert.equal(second.retryAfter, '1', binding.name)
      if (binding === rest) assert.equal(second.status, 409)
      release()
      assert.equal((await first).code, 'ok')
    }
  } finally {
    await modern.close()
    await legacy.close()
    await p.stop()
    await ledgerStore.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
