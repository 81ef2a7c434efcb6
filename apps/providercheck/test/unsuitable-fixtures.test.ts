// A fixture in the wrong state is the caller's mistake, not the provider's: the checks that need it are skipped as
// unsuitable_fixture, saying what to pass instead, and no check fails. Against the real provider's demo data.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runKit } from '../src/index.js'
import { freshTarget, SECRET, TENANT, verdicts } from './support/kit-harness.js'

async function runWith(fixtures: { customer: string; transaction: string; subscription: string }) {
  const target = await freshTarget()
  try {
    return await runKit({
      baseUrl: target.url,
      secret: SECRET,
      allowPrivate: true,
      fixtures: { tenant: TENANT, ...fixtures },
    })
  } finally {
    await target.close()
  }
}

test('a paused subscription as -subscription skips the cancel checks as unsuitable_fixture, failing nothing', async () => {
  // cus_3001's subscription sub_3001 is paused; its charge ch_3001 refunds as pending.
  const run = await runWith({ customer: 'cus_3001', transaction: 'ch_3001', subscription: 'sub_3001' })
  const notPassing = Object.entries(verdicts(run.results)).filter(([, v]) => v !== 'pass')
  assert.deepEqual(Object.fromEntries(notPassing), {
    cancel_dry_run: 'skip unsuitable_fixture',
    cancel_at_period_end: 'skip unsuitable_fixture',
    cancel_again: 'skip unsuitable_fixture',
    // REST only: over MCP it never applies, whatever the fixtures.
    signature_idempotency_key: 'skip not_applicable',
  })
  assert.equal(
    run.results.find((r) => r.id === 'cancel_again')?.reason,
    'needs cancel_at_period_end, skipped for an unsuitable fixture (see its reason)',
  )
  const dryRun = run.results.find((r) => r.id === 'cancel_dry_run')
  assert.equal(
    dryRun?.reason,
    'sub_3001 is paused: the cancel checks need an active (or trialing) subscription that is not set to cancel; pass one as -subscription',
  )
  assert.equal(run.passed, false, 'an unsuitable fixture proves nothing, so the run does not pass')
})

test('a failed charge as -transaction skips the refund checks as unsuitable_fixture', async () => {
  const run = await runWith({ customer: 'cus_4001', transaction: 'ch_4001', subscription: 'sub_1001' })
  const v = verdicts(run.results)
  for (const id of ['refund_dry_run', 'refund', 'refund_exceeds']) assert.equal(v[id], 'skip unsuitable_fixture', id)
  assert.match(
    run.results.find((r) => r.id === 'refund')?.reason ?? '',
    /^ch_4001 is failed: the refund checks need a succeeded charge .*; pass one as -transaction$/,
  )
  assert.equal(v.get_transaction, 'pass', 'the provider answered the charge correctly')
})

test("a subscription of another customer is named as an unsuitable fixture, not a gap in the provider's list", async () => {
  // The likely slip: the seed's customer with the paused subscription of another customer.
  const run = await runWith({ customer: 'cus_1001', transaction: 'ch_1001', subscription: 'sub_3001' })
  const notPassing = Object.entries(verdicts(run.results)).filter(([, v]) => v !== 'pass')
  assert.deepEqual(Object.fromEntries(notPassing), {
    list_transactions: 'skip unsuitable_fixture',
    cancel_dry_run: 'skip unsuitable_fixture',
    cancel_at_period_end: 'skip unsuitable_fixture',
    cancel_again: 'skip unsuitable_fixture',
    // REST only: over MCP it never applies, whatever the fixtures.
    signature_idempotency_key: 'skip not_applicable',
  })
  assert.equal(
    run.results.find((r) => r.id === 'list_transactions')?.reason,
    'sub_3001 belongs to cus_3001, not cus_1001: pass a subscription of cus_1001 as -subscription, or -customer cus_3001',
  )
})
