// Every profile tool over real HTTP with the official clients of both eras (v2 modern, v2 legacy, v1), every request
// signed; results are contract objects validated by each client against the $ref'd outputSchemas.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { contractValidator } from '@tollgate/contract'
import { TOOL_DESCRIPTIONS } from '../src/mcp/tool-table.js'
import {
  type AnyClient,
  connect,
  demoBilling,
  type Era,
  mail,
  REFUNDS_ONLY,
  startTestProvider,
  type TestProvider,
} from './helpers.js'

const BASE = 'https://schemas.supportroute.dev/merchant-provider/v1/'
const ERAS: Era[] = ['modern', 'legacy', 'v1']

let provider: TestProvider
before(async () => {
  provider = await startTestProvider()
})
after(async () => {
  await provider.stop()
})

function valid(ref: string, value: unknown) {
  const verdict = contractValidator(ref)(value)
  assert.equal(verdict.valid, true, verdict.valid ? '' : verdict.errors)
}

for (const era of ERAS) {
  describe(`tools over ${era}`, () => {
    let client: AnyClient
    before(async () => {
      client = await connect(provider.url, era)
    })
    after(async () => {
      await client.close()
    })

    // The v1 client has no era to report (it only speaks the 2025 protocol), so the check exists for v2 only.
    if (era !== 'v1') {
      test('negotiates the expected era', () => {
        assert.equal(client.protocolEra, era === 'modern' ? 'modern' : 'legacy')
      })
    }

    test('lists the 10 profile tools in table order, each schema a $ref to the contract $id', async () => {
      const tools = await client.listTools()
      assert.deepEqual(
        tools.map((t) => t.name),
        [
          'sr_describe',
          'sr_find_customers',
          'sr_get_customer',
          'sr_list_transactions',
          'sr_get_transaction',
          'sr_get_subscription',
          'sr_refund',
          'sr_cancel_subscription',
          'sr_get_operation',
          'sr_list_payment_attempts',
        ],
      )
      const refund = tools.find((t) => t.name === 'sr_refund')
      assert.deepEqual(refund?.inputSchema, { type: 'object', $ref: `${BASE}tool-inputs.json#/$defs/refund` })
      assert.deepEqual(refund?.outputSchema, { type: 'object', $ref: `${BASE}refund-result.json` })
      const find = tools.find((t) => t.name === 'sr_find_customers')
      assert.deepEqual(find?.inputSchema, { type: 'object', $ref: `${BASE}customer-query.json` })
      assert.deepEqual(find?.outputSchema, { type: 'object', $ref: `${BASE}customer-candidates.json` })
    })

    test('every listed tool carries its one-sentence description (generic clients show it)', async () => {
      const tools = (await client.listTools()) as { name: string; description?: string }[]
      for (const t of tools) assert.equal(t.description, TOOL_DESCRIPTIONS[t.name], t.name)
      for (const t of tools) assert.match(t.description ?? '', /^[A-Z].{20,160}\.$/, t.name)
    })

    test('sr_describe declares the capabilities whose tools are listed', async () => {
      const r = await client.callTool('sr_describe', {})
      assert.equal(r.isError ?? false, false)
      valid('describe.json', r.structuredContent)
      assert.deepEqual(r.structuredContent?.capabilities, {
        partial_refunds: true,
        cancel_subscription: true,
        cancel_at_period_end: true,
        outcome_callbacks: false,
        payment_attempts: true,
      })
      // The text copy is the same object.
      assert.deepEqual(JSON.parse(r.content[0]?.text ?? ''), r.structuredContent)
    })

    test('sr_find_customers matches on every identifier given', async () => {
      const byCard = await client.callTool('sr_find_customers', { email: mail('CUSTOMER'), card_last4: '4242' })
      assert.deepEqual(byCard.structuredContent, { candidates: [{ customer_ref: 'cus_1001' }] })
      const mismatch = await client.callTool('sr_find_customers', { email: mail('customer'), card_last4: '1881' })
      assert.deepEqual(mismatch.structuredContent, { candidates: [] })
      const byOrder = await client.callTool('sr_find_customers', { order_ref: 'ord_2001' })
      assert.deepEqual(byOrder.structuredContent, { candidates: [{ customer_ref: 'cus_2001' }] })
    })

    test('sr_find_customers with no identifier is an input validation error', async () => {
      const r = await client.callTool('sr_find_customers', {})
      assert.equal(r.isError, true)
    })

    test('sr_get_customer answers the customer, unknown ref → not_found', async () => {
      const r = await client.callTool('sr_get_customer', { customer_ref: 'cus_2001' })
      valid('customer.json', r.structuredContent)
      assert.equal(r.structuredContent?.customer_ref, 'cus_2001')
      assert.deepEqual(r.structuredContent?.emails, [mail('amelie')])
      const missing = await client.callTool('sr_get_customer', { customer_ref: 'cus_nope' })
      assert.equal(missing.isError, true)
      assert.deepEqual(missing.structuredContent, {
        error: { code: 'not_found', message: 'no such object', retryable: false },
      })
    })

    test('sr_list_transactions lists the charges and subscriptions of one customer', async () => {
      const r = await client.callTool('sr_list_transactions', { customer_ref: 'cus_2001' })
      valid('transaction-list.json', r.structuredContent)
      const txs = r.structuredContent?.transactions as { transaction_ref: string }[]
      assert.deepEqual(txs.map((t) => t.transaction_ref).sort(), ['ch_2001', 'ch_2002'])
      const subs = r.structuredContent?.subscriptions as { subscription_ref: string }[]
      assert.deepEqual(
        subs.map((s) => s.subscription_ref),
        ['sub_2001'],
      )
    })

    test('sr_get_transaction answers ch_1001 as the seed defines it (integer minor units)', async () => {
      const r = await client.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      valid('transaction.json', r.structuredContent)
      const t = r.structuredContent as Record<string, unknown>
      assert.deepEqual(t.amount, { amount_minor: 4999, currency: 'USD' })
      assert.equal(t.card_last4, '4242')
      assert.equal(t.card_brand, 'visa')
      assert.equal(t.subscription_ref, 'sub_1001')
      assert.equal(t.state, 'succeeded')
      assert.equal(
        Object.keys(t).some((k) => k.startsWith('_')),
        false,
      )
    })

    test('sr_get_subscription answers sub_1001 active monthly', async () => {
      const r = await client.callTool('sr_get_subscription', { subscription_ref: 'sub_1001' })
      valid('subscription.json', r.structuredContent)
      assert.equal(r.structuredContent?.phase, 'active')
      assert.deepEqual(r.structuredContent?.billing_interval, { unit: 'month', count: 1 })
    })

    test('sr_list_payment_attempts pages with an opaque cursor, oldest update first', async () => {
      const first = await client.callTool('sr_list_payment_attempts', {
        updated_since: '2000-01-01T00:00:00Z',
        limit: 2,
      })
      valid('payment-attempt-list.json', first.structuredContent)
      const page1 = first.structuredContent?.payment_attempts as { attempt_ref: string }[]
      assert.deepEqual(
        page1.map((a) => a.attempt_ref),
        ['pa_1001', 'pa_4001'],
      )
      const cursor = first.structuredContent?.next_cursor as string
      const rest = await client.callTool('sr_list_payment_attempts', {
        updated_since: '2000-01-01T00:00:00Z',
        cursor,
        limit: 10,
      })
      const page2 = rest.structuredContent?.payment_attempts as { attempt_ref: string }[]
      assert.deepEqual(
        page2.map((a) => a.attempt_ref),
        ['pa_4002', 'pa_2001', 'pa_3001'],
      )
      assert.equal(rest.structuredContent?.next_cursor, null)
      const bad = await client.callTool('sr_list_payment_attempts', {
        updated_since: '2000-01-01T00:00:00Z',
        cursor: 'bm9wZQ',
      })
      assert.equal((bad.structuredContent?.error as { code: string } | undefined)?.code, 'invalid_request')
    })

    test('sr_get_operation of a key never seen answers unknown', async () => {
      const r = await client.callTool('sr_get_operation', { idempotency_key: `never-seen-${era}` })
      valid('operation.json', r.structuredContent)
      assert.deepEqual(r.structuredContent, { idempotency_key: `never-seen-${era}`, status: 'unknown' })
    })

    test('a dry-run refund answers would_succeed without a key', async () => {
      const r = await client.callTool('sr_refund', {
        request: {
          transaction_ref: 'ch_1001',
          amount: { amount_minor: 2000, currency: 'USD' },
          reason: 'service_issue',
          dry_run: true,
        },
      })
      valid('refund-result.json', r.structuredContent)
      assert.deepEqual(r.structuredContent, {
        idempotency_key: null,
        status: 'would_succeed',
        transaction_ref: 'ch_1001',
        amount: { amount_minor: 2000, currency: 'USD' },
        refund_ref: null,
      })
    })

    test('a dry-run cancel answers would_succeed without a key', async () => {
      const r = await client.callTool('sr_cancel_subscription', {
        subscription_ref: 'sub_1001',
        request: { at_period_end: true, reason: 'forgot_to_cancel', dry_run: true },
      })
      valid('cancel-result.json', r.structuredContent)
      assert.equal(r.structuredContent?.status, 'would_succeed')
      assert.equal(r.structuredContent?.effective_at, null)
    })

    test('an amount written as a float is refused at the door (strict integers-only parse), changing nothing', async () => {
      const before = await client.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      await assert.rejects(
        client.callTool('sr_refund', {
          idempotency_key: 'k-float-amount-000000000001',
          request: {
            transaction_ref: 'ch_1001',
            amount: { amount_minor: 20.5, currency: 'USD' },
            reason: 'service_issue',
            dry_run: false,
          },
        }),
        /Parse error|-32700/,
      )
      const afterward = await client.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      assert.deepEqual(afterward.structuredContent, before.structuredContent)
    })
  })
}

test('capability tools are not listed when sr_describe does not declare the capability', async () => {
  // A billing system without subscriptions or payment attempts.
  const { billing, dispose } = await demoBilling(() => REFUNDS_ONLY)
  const p = await startTestProvider({ billing })
  try {
    for (const era of ERAS) {
      const c = await connect(p.url, era)
      const names = (await c.listTools()).map((t) => t.name)
      await c.close()
      assert.deepEqual(names, [
        'sr_describe',
        'sr_find_customers',
        'sr_get_customer',
        'sr_list_transactions',
        'sr_get_transaction',
        'sr_refund',
        'sr_get_operation',
      ])
    }
  } finally {
    await p.stop()
    await dispose()
  }
})
