// A pending refund settles once: lookups racing after its time has come all report the first settlement, and the
// charge's refund record carries that same time.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DemoLedger, demoLedgerStore, openSqliteStore } from '../src/index.js'

test('two lookups settling the same pending refund agree, and the ledger keeps the first time', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-settle-'))
  const store = openSqliteStore(join(dir, 'ledger.sqlite'))
  try {
    let clock = Date.parse('2026-10-15T09:00:00Z')
    // Every reading of the clock is a second later, so each settlement attempt would stamp another time.
    const ledger = new DemoLedger(demoLedgerStore(store), { now: () => (clock += 1000), settleAfterMs: 60_000 })
    await ledger.seed()
    const pending = await ledger.refund('settle-key', {
      transaction_ref: 'ch_3001',
      amount: { amount_minor: 500, currency: 'USD' },
      reason: 'service_issue',
    })
    assert.equal(pending.status, 'pending')
    clock += 120_000
    const [a, b] = await Promise.all([ledger.lookup('settle-key'), ledger.lookup('settle-key')])
    assert.equal(a?.status, 'succeeded')
    assert.deepEqual(b, a)
    assert.deepEqual(await ledger.lookup('settle-key'), a)
    const refunds = (await ledger.getTransaction('ch_3001'))?.refunds as { at: string; idempotency_key: string }[]
    assert.equal(refunds.length, 1)
    assert.equal(refunds[0]?.at, (a as { processed_at: string }).processed_at)
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
