// A billing call that fails mid-way leaves the key recoverable: the caller gets unavailable (retryable), and the
// retry with the same key asks billing.lookup(key) before doing anything, so nothing is refunded twice.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, test } from 'node:test'
import {
  DemoLedger,
  demoLedgerStore,
  openSqliteStore,
  ProviderRules,
  type RefundCommand,
  type Store,
} from '../src/index.js'
import { delegateBilling, newKey } from './helpers.js'

let dir: string
let store: Store
let ledger: DemoLedger
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-recovery-'))
  store = openSqliteStore(join(dir, 's.sqlite'))
  ledger = new DemoLedger(demoLedgerStore(store))
  await ledger.seed()
})
afterEach(async () => {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
})

const args = (key: string) => ({
  idempotency_key: key,
  request: {
    transaction_ref: 'ch_1001',
    amount: { amount_minor: 4999, currency: 'USD' },
    reason: 'goodwill',
    dry_run: false,
  },
})

for (const when of ['after', 'before'] as const) {
  test(`billing fails ${when} committing: unavailable, then the retry finishes with exactly one refund`, async () => {
    let failures = 1
    let refundCalls = 0
    const billing = delegateBilling(ledger, {
      refund: async (key: string, command: RefundCommand) => {
        refundCalls++
        if (failures > 0) {
          failures--
          if (when === 'after') await ledger.refund(key, command)
          throw new Error('connection reset by the processor')
        }
        return ledger.refund(key, command)
      },
    })
    const rules = new ProviderRules({ store, billing })
    const key = newKey()
    const first = await rules.refund(args(key))
    assert.deepEqual(first.body, {
      error: {
        code: 'unavailable',
        message: 'the billing system did not answer; retry with the same key',
        retryable: true,
      },
    })
    // What the port threw travels with the answer to the call's log line (never into the body).
    assert.equal(first.ok, false)
    assert.equal(!first.ok && (first.fault as Error).message, 'connection reset by the processor')
    const meanwhile = await rules.getOperation(key)
    assert.equal(meanwhile.ok && meanwhile.body.status, 'pending')
    const retry = await rules.refund(args(key))
    assert.equal(retry.ok, true)
    assert.equal(retry.ok && retry.body.status, 'succeeded')
    // After a committed refund the retry is answered from lookup(key): billing.refund is not called again.
    assert.equal(refundCalls, when === 'after' ? 1 : 2)
    const tx = await ledger.getTransaction('ch_1001')
    assert.deepEqual(
      ((tx?.refunds ?? []) as { idempotency_key: string }[]).map((r) => r.idempotency_key),
      [key],
    )
    assert.equal((await store.get(key))?.status, 'succeeded')
  })
}
