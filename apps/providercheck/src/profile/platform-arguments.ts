// The argument objects the platform sends to each profile tool; a published inputSchema must accept all of them.
// They follow the seed's examples (refund and cancel arguments, the find-customer identifiers).

const KEY_REFUND =
  '0199a3c1-0a0b-7c0d-8e0f-101112131415:ticket:0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6:refund:0199e2c4-7777-7c8d-9e0f-a1b2c3d4e5f6'
const KEY_CANCEL =
  '0199a3c1-0a0b-7c0d-8e0f-101112131415:ticket:0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6:cancel_subscription:0199e2c4-8888-7c8d-9e0f-a1b2c3d4e5f6'
const refundRequest = (dryRun: boolean) => ({
  transaction_ref: 'ch_1001',
  amount: { amount_minor: 2000, currency: 'USD' },
  reason: 'service_issue',
  dry_run: dryRun,
})

export const PLATFORM_ARGUMENTS: Readonly<Record<string, readonly Record<string, unknown>[]>> = {
  sr_describe: [{}],
  sr_find_customers: [
    { email: '[email protected]' },
    { phone: '+15555550100' },
    { customer_ref: 'cus_1001' },
    { transaction_ref: 'ch_1001' },
    { order_ref: 'ord_1001' },
    { card_last4: '4242' },
    { email: '[email protected]', card_last4: '4242', transaction_ref: 'ch_1001' },
  ],
  sr_get_customer: [{ customer_ref: 'cus_1001' }],
  sr_list_transactions: [{ customer_ref: 'cus_1001' }],
  sr_get_transaction: [{ transaction_ref: 'ch_1001' }],
  sr_get_subscription: [{ subscription_ref: 'sub_1001' }],
  sr_refund: [{ idempotency_key: KEY_REFUND, request: refundRequest(false) }, { request: refundRequest(true) }],
  sr_cancel_subscription: [
    {
      idempotency_key: KEY_CANCEL,
      subscription_ref: 'sub_88',
      request: { at_period_end: true, reason: 'forgot_to_cancel', dry_run: false },
    },
    {
      idempotency_key: KEY_CANCEL,
      subscription_ref: 'sub_88',
      request: { at_period_end: false, reason: 'forgot_to_cancel', dry_run: false },
    },
    { subscription_ref: 'sub_88', request: { at_period_end: true, reason: 'forgot_to_cancel', dry_run: true } },
  ],
  sr_get_operation: [{ idempotency_key: KEY_REFUND }, { idempotency_key: KEY_CANCEL }],
  sr_list_payment_attempts: [
    { updated_since: '2026-10-01T00:00:00Z' },
    { updated_since: '2026-10-01T00:00:00Z', cursor: 'c_2', limit: 100 },
  ],
}
