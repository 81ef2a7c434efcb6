// The server's generic pre-check before real calls: on for every port by default (billing is not called for a
// refusal), skipped for a port that applies the generic refusals itself — with the dry run's codes either way.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { type BillingPort, DemoLedger, demoLedgerStore, openSqliteStore } from '../src/index.js'
import { attempt, delegateBilling, newKey, startTestProvider } from './helpers.js'

const refund = (ref: string, amountMinor: number, key?: string) => ({
  ...(key !== undefined && { idempotency_key: key }),
  request: {
    transaction_ref: ref,
    amount: { amount_minor: amountMinor, currency: 'USD' },
    reason: 'service_issue',
    dry_run: key === undefined,
  },
})
const codeOf = (r: { structuredContent?: Record<string, unknown> }) =>
  (r.structuredContent?.error as { code?: string } | undefined)?.code

test('a port without appliesGenericRefusals is not called for a refund the generic rules refuse', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-precheck-'))
  const store = openSqliteStore(join(dir, 'ledger.sqlite'))
  const ledger = new DemoLedger(demoLedgerStore(store))
  await ledger.seed()
  const called: string[] = []
  // delegateBilling copies methods only: this port does not claim appliesGenericRefusals.
  const billing: BillingPort = delegateBilling(ledger, {
    refund: async (key, command) => {
      called.push(command.transaction_ref)
      return ledger.refund(key, command)
    },
  })
  assert.equal(billing.appliesGenericRefusals, undefined)
  const p = await startTestProvider({ billing })
  try {
    const disputed = await attempt(p.url, 'modern', 'sr_refund', {
      ...refund('ch_2002', 100, newKey()),
      request: { ...refund('ch_2002', 100).request, amount: { amount_minor: 100, currency: 'EUR' }, dry_run: false },
    })
    assert.equal(codeOf(disputed), 'not_refundable')
    assert.equal(
      codeOf(await attempt(p.url, 'modern', 'sr_refund', refund('ch_1001', 5000, newKey()))),
      'amount_exceeds_refundable',
    )
    assert.deepEqual(called, [])
    const ok = await attempt(p.url, 'modern', 'sr_refund', refund('ch_1001', 100, newKey()))
    assert.equal(ok.structuredContent?.status, 'succeeded')
    assert.deepEqual(called, ['ch_1001'])
  } finally {
    await p.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the demo ledger applies the generic refusals itself, in the dry run order (restricted account and too much)', async () => {
  const p = await startTestProvider()
  try {
    assert.equal(p.billing.appliesGenericRefusals, true)
    // ch_5001: 3000 USD on a restricted account; 5000 breaks both rules. The dry run names the amount first.
    const dry = await attempt(p.url, 'legacy', 'sr_refund', refund('ch_5001', 5000))
    assert.equal(codeOf(dry), 'amount_exceeds_refundable')
    const real = await attempt(p.url, 'legacy', 'sr_refund', refund('ch_5001', 5000, newKey()))
    assert.equal(codeOf(real), 'amount_exceeds_refundable')
    const withinAmount = await attempt(p.url, 'legacy', 'sr_refund', refund('ch_5001', 100, newKey()))
    assert.equal(codeOf(withinAmount), 'account_restricted')
    // A canceled subscription is refused by the ledger's own check as well.
    const cancel = await attempt(p.url, 'legacy', 'sr_cancel_subscription', {
      idempotency_key: newKey('cancel_subscription'),
      subscription_ref: 'sub_2001',
      request: { at_period_end: false, reason: 'forgot_to_cancel', dry_run: false },
    })
    assert.equal(codeOf(cancel), 'already_canceled')
    // Nothing was refunded on ch_5001.
    assert.deepEqual((await p.billing.getTransaction('ch_5001'))?.refunds, [])
  } finally {
    await p.stop()
  }
})
