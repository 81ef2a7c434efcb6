// The rules over real HTTP with every client era: dry runs, keys, replay, conflict, refusals, pending → final.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { contractValidator } from '@tollgate/contract'
import {
  type AnyClient,
  type CallResult,
  connect,
  type Era,
  newKey,
  startTestProvider,
  type TestProvider,
} from './helpers.js'

const usd = (amount_minor: number) => ({ amount_minor, currency: 'USD' })
const refundArgs = (ref: string, amount: { amount_minor: number; currency: string }, key?: string, dry = false) => ({
  ...(key !== undefined && { idempotency_key: key }),
  request: { transaction_ref: ref, amount, reason: 'service_issue', dry_run: dry },
})
const cancelArgs = (ref: string, atPeriodEnd: boolean, key?: string, dry = false) => ({
  ...(key !== undefined && { idempotency_key: key }),
  subscription_ref: ref,
  request: { at_period_end: atPeriodEnd, reason: 'forgot_to_cancel', dry_run: dry },
})

function errorOf(r: CallResult): { code: string; message: string; retryable: boolean } {
  assert.equal(r.isError, true, `expected an error, got ${JSON.stringify(r.structuredContent)}`)
  const v = contractValidator('error.json')(r.structuredContent)
  assert.equal(v.valid, true, v.valid ? '' : v.errors)
  return (r.structuredContent as { error: { code: string; message: string; retryable: boolean } }).error
}

for (const era of ['modern', 'legacy', 'v1'] as Era[]) {
  describe(`rules over ${era}`, () => {
    let provider: TestProvider
    let c: AnyClient
    let clock = Date.now()
    before(async () => {
      provider = await startTestProvider({ now: () => clock, demoLedger: { settleAfterMs: 60_000 } })
      c = await connect(provider.url, era)
    })
    after(async () => {
      await c.close()
      await provider.stop()
    })
    const refunds = async (ref: string) =>
      (
        (await c.callTool('sr_get_transaction', { transaction_ref: ref })).structuredContent?.refunds as
          | unknown[]
          | undefined
      )?.length

    test('arguments the contract refuses get the invalid_request envelope and change nothing', async () => {
      const before = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      for (const args of [
        refundArgs('ch_1001', usd(2000), newKey(), true), // a dry run carrying a key
        refundArgs('ch_1001', usd(2000)), // a real call without one
        // (a fractional amount never gets this far: the door's integers-only parse refuses it; see door.test.ts)
        { idempotency_key: newKey(), request: { transaction_ref: 'ch_1001', dry_run: false } }, // fields missing
      ]) {
        const error = errorOf(await c.callTool('sr_refund', args))
        assert.equal(error.code, 'invalid_request')
        assert.equal(error.retryable, false)
        assert.match(error.message, /^the arguments do not match tool-inputs\.json#\/\$defs\/refund: /)
      }
      const unknownField = errorOf(await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001', extra: 1 }))
      assert.equal(unknownField.code, 'invalid_request')
      const afterward = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      assert.deepEqual(afterward.structuredContent, before.structuredContent)
    })

    test('a dry run changes nothing', async () => {
      const before = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      const r = await c.callTool('sr_refund', refundArgs('ch_1001', usd(2000), undefined, true))
      assert.equal(r.structuredContent?.status, 'would_succeed')
      const afterward = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      assert.deepEqual(afterward.structuredContent, before.structuredContent)
    })

    test('a dry run carrying a key, and a real call without one, are refused and change nothing', async () => {
      const key = newKey()
      const dryWithKey = await c.callTool('sr_refund', refundArgs('ch_1001', usd(100), key, true))
      assert.equal(dryWithKey.isError, true)
      const realWithout = await c.callTool('sr_refund', refundArgs('ch_1001', usd(100)))
      assert.equal(realWithout.isError, true)
      assert.equal(await refunds('ch_1001'), 0)
      const op = await c.callTool('sr_get_operation', { idempotency_key: key })
      assert.equal(op.structuredContent?.status, 'unknown')
    })

    test('a real refund succeeds once; the same key and parameters replay the first answer', async () => {
      const key = newKey()
      const first = await c.callTool('sr_refund', refundArgs('ch_1001', usd(2000), key))
      assert.equal(first.isError ?? false, false)
      const v = contractValidator('refund-result.json')(first.structuredContent)
      assert.equal(v.valid, true, v.valid ? '' : v.errors)
      assert.equal(first.structuredContent?.status, 'succeeded')
      assert.equal(first.structuredContent?.idempotency_key, key)
      assert.deepEqual(first.structuredContent?.amount, usd(2000))
      const again = await c.callTool('sr_refund', refundArgs('ch_1001', usd(2000), key))
      assert.deepEqual(again.structuredContent, first.structuredContent)
      assert.equal(await refunds('ch_1001'), 1)
      const op = await c.callTool('sr_get_operation', { idempotency_key: key })
      const ov = contractValidator('operation.json')(op.structuredContent)
      assert.equal(ov.valid, true, ov.valid ? '' : ov.errors)
      assert.equal(op.structuredContent?.status, 'succeeded')
      assert.equal(op.structuredContent?.operation, 'refund')
      assert.equal(op.structuredContent?.target_ref, 'ch_1001')
      assert.deepEqual(op.structuredContent?.result, first.structuredContent)
      // The refund shows on the charge and among the customer's prior refunds, under its key.
      const tx = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      const rec = (tx.structuredContent?.refunds as { idempotency_key: string; amount: unknown }[] | undefined)?.[0]
      assert.equal(rec?.idempotency_key, key)
      const cus = await c.callTool('sr_get_customer', { customer_ref: 'cus_1001' })
      assert.equal((cus.structuredContent?.prior_refunds as unknown[] | undefined)?.length, 1)
    })

    test('the same key with other parameters is idempotency_conflict and runs nothing', async () => {
      const key = newKey()
      await c.callTool('sr_refund', refundArgs('ch_9001', usd(100), key))
      const other = await c.callTool('sr_refund', refundArgs('ch_9001', usd(101), key))
      assert.deepEqual(errorOf(other), {
        code: 'idempotency_conflict',
        message: 'this key was used with other parameters',
        retryable: false,
      })
      const reused = await c.callTool('sr_cancel_subscription', cancelArgs('sub_1001', true, key))
      assert.equal(errorOf(reused).code, 'idempotency_conflict')
      assert.equal(await refunds('ch_9001'), 1)
    })

    test('a refund beyond the refundable amount is refused, and the refusal replays under its key', async () => {
      const key = newKey()
      const r = await c.callTool('sr_refund', refundArgs('ch_1001', usd(3000), key))
      const e = errorOf(r)
      assert.equal(e.code, 'amount_exceeds_refundable')
      assert.equal(e.retryable, false)
      const again = await c.callTool('sr_refund', refundArgs('ch_1001', usd(3000), key))
      assert.deepEqual(again.structuredContent, r.structuredContent)
      const op = await c.callTool('sr_get_operation', { idempotency_key: key })
      assert.equal(op.structuredContent?.status, 'failed')
      assert.deepEqual(op.structuredContent?.refusal, { code: e.code, message: e.message })
      // The rest is still refundable exactly.
      const rest = await c.callTool('sr_refund', refundArgs('ch_1001', usd(2999), newKey()))
      assert.equal(rest.structuredContent?.status, 'succeeded')
      const none = await c.callTool('sr_refund', refundArgs('ch_1001', usd(1), undefined, true))
      assert.equal(errorOf(none).code, 'amount_exceeds_refundable')
    })

    for (const [what, ref, amount, code] of [
      ['another currency', 'ch_9001', { amount_minor: 100, currency: 'EUR' }, 'currency_mismatch'],
      ['a disputed charge', 'ch_2002', { amount_minor: 100, currency: 'EUR' }, 'not_refundable'],
      ['a failed charge', 'ch_4001', usd(100), 'not_refundable'],
      ['an app-store charge', 'ch_4002', usd(100), 'not_refundable'],
      ['a restricted account', 'ch_5001', usd(100), 'account_restricted'],
      ['a charge on hold', 'ch_6001', usd(100), 'merchant_hold'],
      ["the merchant's own rule", 'ch_6002', usd(100), 'x_refund_window_closed'],
    ] as const) {
      test(`refunds of ${what} are refused with ${code}, dry run and real`, async () => {
        const already = await refunds(ref)
        const dry = await c.callTool('sr_refund', refundArgs(ref, amount, undefined, true))
        assert.equal(errorOf(dry).code, code)
        const key = newKey()
        const real = await c.callTool('sr_refund', refundArgs(ref, amount, key))
        assert.equal(errorOf(real).code, code)
        assert.equal(await refunds(ref), already)
        const op = await c.callTool('sr_get_operation', { idempotency_key: key })
        assert.equal((op.structuredContent?.refusal as { code: string } | undefined)?.code, code)
      })
    }

    test('a refund of an unknown charge is not_found and records no key', async () => {
      const key = newKey()
      const r = await c.callTool('sr_refund', refundArgs('ch_nope', usd(100), key))
      assert.equal(errorOf(r).code, 'not_found')
      const op = await c.callTool('sr_get_operation', { idempotency_key: key })
      assert.equal(op.structuredContent?.status, 'unknown')
    })

    test('cancels: at period end succeeds once; canceled and paused subscriptions are refused', async () => {
      const key = newKey('cancel_subscription')
      const r = await c.callTool('sr_cancel_subscription', cancelArgs('sub_1001', true, key))
      const v = contractValidator('cancel-result.json')(r.structuredContent)
      assert.equal(v.valid, true, v.valid ? '' : v.errors)
      const sub = await c.callTool('sr_get_subscription', { subscription_ref: 'sub_1001' })
      assert.equal(sub.structuredContent?.cancel_at_period_end, true)
      assert.equal(r.structuredContent?.effective_at, sub.structuredContent?.current_period_end)
      const replay = await c.callTool('sr_cancel_subscription', cancelArgs('sub_1001', true, key))
      assert.deepEqual(replay.structuredContent, r.structuredContent)
      const twice = await c.callTool(
        'sr_cancel_subscription',
        cancelArgs('sub_1001', true, newKey('cancel_subscription')),
      )
      assert.equal(errorOf(twice).code, 'already_canceled')
      const canceled = await c.callTool(
        'sr_cancel_subscription',
        cancelArgs('sub_2001', false, newKey('cancel_subscription')),
      )
      assert.equal(errorOf(canceled).code, 'already_canceled')
      const paused = await c.callTool('sr_cancel_subscription', cancelArgs('sub_3001', false, undefined, true))
      assert.equal(errorOf(paused).code, 'subscription_not_active')
      // Ending now works on a subscription only scheduled to end.
      const now = await c.callTool(
        'sr_cancel_subscription',
        cancelArgs('sub_1001', false, newKey('cancel_subscription')),
      )
      assert.equal(now.structuredContent?.status, 'succeeded')
      const ended = await c.callTool('sr_get_subscription', { subscription_ref: 'sub_1001' })
      assert.equal(ended.structuredContent?.phase, 'canceled')
    })

    test('a refund the processor confirms later answers pending until it settles', async () => {
      const key = newKey()
      const r = await c.callTool('sr_refund', refundArgs('ch_3001', usd(500), key))
      const v = contractValidator('refund-result.json')(r.structuredContent)
      assert.equal(v.valid, true, v.valid ? '' : v.errors)
      assert.equal(r.structuredContent?.status, 'pending')
      assert.equal(typeof r.structuredContent?.refund_ref, 'string')
      assert.equal('processed_at' in (r.structuredContent ?? {}), false)
      const op = await c.callTool('sr_get_operation', { idempotency_key: key })
      assert.equal(op.structuredContent?.status, 'pending')
      const replay = await c.callTool('sr_refund', refundArgs('ch_3001', usd(500), key))
      assert.equal(replay.structuredContent?.status, 'pending')
      // The pending refund already counts against the refundable amount.
      const tooMuch = await c.callTool('sr_refund', refundArgs('ch_3001', usd(6501), undefined, true))
      assert.equal(errorOf(tooMuch).code, 'amount_exceeds_refundable')
      clock += 60_000
      const settled = await c.callTool('sr_get_operation', { idempotency_key: key })
      const sv = contractValidator('operation.json')(settled.structuredContent)
      assert.equal(sv.valid, true, sv.valid ? '' : sv.errors)
      assert.equal(settled.structuredContent?.status, 'succeeded')
      const result = settled.structuredContent?.result as Record<string, unknown>
      assert.equal(result.status, 'succeeded')
      assert.equal(result.refund_ref, r.structuredContent?.refund_ref)
      assert.equal(typeof result.processed_at, 'string')
      const final = await c.callTool('sr_refund', refundArgs('ch_3001', usd(500), key))
      assert.deepEqual(final.structuredContent, result)
      assert.equal(await refunds('ch_3001'), 1)
    })
  })
}
