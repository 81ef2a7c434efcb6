// The BillingPort is typed by the contract: the three adapter mistakes the issue found compiling — a unix time where
// the contract wants an RFC 3339 string, a missing `settlement`, an extra field — are compile errors. Each mistake
// below carries `@ts-expect-error`, so the repository's type-check FAILS if one of them stops being an error (the
// directive then has nothing to expect). Types are not proof: the test also runs each object through the contract's
// runtime validator, which the server applies to every answer.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { contractValidator, type Transaction } from '@tollgate/contract'
import type { BillingPort, RefundOutcome } from '../src/index.js'
import { sampleCharge } from './fixtures/sample-contract-objects.js'

// One adapter object that compiles: a transaction as a merchant's adapter would build it from its own row.
const row = { id: 'PAY-77001', customer: 'CUS-9', cents: 4999, currency: 'usd', created: 1764750000 }
const correct: Transaction = {
  transaction_ref: row.id,
  customer_ref: row.customer,
  order_ref: null,
  subscription_ref: null,
  state: 'succeeded',
  amount: { amount_minor: row.cents, currency: row.currency.toUpperCase() },
  created_at: new Date(row.created * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  description: null,
  product_type: null,
  charge_type: 'one_time',
  processor: 'in_house',
  refund_route: 'provider',
  card_last4: null,
  card_brand: null,
  disputed: false,
  refunds: [],
  settlement: null,
}

const unixTime: Transaction = {
  ...correct,
  // @ts-expect-error — created_at is an RFC 3339 string, not unix seconds
  created_at: 1764750000,
}

// @ts-expect-error — settlement is required (null when unknown)
const missingSettlement: Transaction = {
  transaction_ref: 'PAY-77001',
  customer_ref: 'CUS-9',
  order_ref: null,
  subscription_ref: null,
  state: 'succeeded',
  amount: { amount_minor: 4999, currency: 'USD' },
  created_at: '2025-12-03T08:20:00Z',
  description: null,
  product_type: null,
  charge_type: 'one_time',
  processor: 'in_house',
  refund_route: 'provider',
  card_last4: null,
  card_brand: null,
  disputed: false,
  refunds: [],
}

const extraField: Transaction = {
  ...correct,
  // @ts-expect-error — the contract's transaction has no such field (additionalProperties: false)
  internal_note: 'VIP',
}

// The same mistakes inside a port: the method's return type is the contract's.
const port: Pick<BillingPort, 'getTransaction' | 'refund'> = {
  // @ts-expect-error — a port answering unix seconds does not implement BillingPort
  getTransaction: async () => ({ ...sampleCharge('PAY-77001'), created_at: 1764750000 }),
  // @ts-expect-error — processed_at is a string in a succeeded refund outcome
  refund: async (): Promise<RefundOutcome> => ({ status: 'succeeded', refund_ref: 'RF-1', processed_at: 1764750000 }),
}

test('the correct adapter object is a valid transaction; each typed mistake is also refused at run time', () => {
  const check = contractValidator('transaction.json')
  assert.deepEqual(check(correct), { valid: true })
  const expected: [unknown, RegExp][] = [
    [unixTime, /\/created_at must be string/],
    [missingSettlement, /must have required property 'settlement'/],
    [extraField, /must NOT have additional properties/],
  ]
  for (const [value, why] of expected) {
    const verdict = check(value)
    assert.equal(verdict.valid, false)
    assert.match((verdict as { errors: string }).errors, why)
  }
  assert.equal(typeof port.getTransaction, 'function')
})
