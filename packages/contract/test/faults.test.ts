// contractFaults names why a value fails a schema by path and rule — never by value — for logs and sandbox answers.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { contractFaults } from '@tollgate/contract'

const transaction = JSON.parse(
  readFileSync(new URL('../examples/v1/transaction/seed.json', import.meta.url), 'utf8'),
) as Record<string, unknown>

test('a valid object has no faults; each mistake is named by schema, path and rule, never by value', () => {
  assert.deepEqual(contractFaults('transaction.json', transaction), [])
  const { settlement: _, ...withoutSettlement } = transaction
  assert.deepEqual(contractFaults('transaction.json', withoutSettlement), ['transaction.settlement: required'])
  assert.deepEqual(contractFaults('transaction.json', { ...transaction, created_at: 1764750000 }), [
    'transaction.created_at: must be string',
  ])
  const extra = contractFaults('transaction.json', { ...transaction, internal_note: 'VIP customer 4242' })
  assert.deepEqual(extra, ['transaction.internal_note: not allowed'])
  const nested = contractFaults('transaction.json', {
    ...transaction,
    refunds: [{ at: 'soon', amount: { amount_minor: 1.5, currency: 'usd' }, idempotency_key: null, reversed_at: null }],
  })
  assert.deepEqual(nested, [
    'transaction.refunds[0].at: does not match its pattern',
    'transaction.refunds[0].amount.amount_minor: must be integer',
    'transaction.refunds[0].amount.currency: does not match its pattern',
  ])
  for (const line of [...extra, ...nested]) assert.doesNotMatch(line, /VIP|4242|soon|1\.5|usd/)
})

test('at most `limit` lines; a conditional rule names the field it requires', () => {
  assert.equal(contractFaults('describe.json', {}, 2).length, 2)
  const succeededWithoutTime = {
    idempotency_key: 'k-1',
    status: 'succeeded',
    transaction_ref: 'ch_1',
    amount: { amount_minor: 100, currency: 'USD' },
    refund_ref: 're_1',
  }
  assert.deepEqual(contractFaults('refund-result.json', succeededWithoutTime), ['refund-result.processed_at: required'])
})
