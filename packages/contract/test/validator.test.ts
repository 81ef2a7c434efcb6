import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CONTRACT_BASE, contractRef, contractValidator, publishedSchema } from '@tollgate/contract'

const usd = (amount_minor: unknown) => ({ amount_minor, currency: 'USD' })

test('contractRef resolves relative refs against the base and passes contract URIs through', () => {
  assert.equal(contractRef('money.json'), `${CONTRACT_BASE}money.json`)
  assert.equal(contractRef('tool-inputs.json#/$defs/refund'), `${CONTRACT_BASE}tool-inputs.json#/$defs/refund`)
  assert.equal(contractRef(`${CONTRACT_BASE}operation.json`), `${CONTRACT_BASE}operation.json`)
})

test('a ref that names no contract schema is ERR_CONTRACT_UNKNOWN_SCHEMA, without echoing the ref', () => {
  const bad = [
    'nope.json',
    'money',
    '../v2/money.json',
    'tool-inputs.json#/$defs/delete_customer',
    'tool-inputs.json#/$defs',
    'money.json#/properties/amount_minor/minimum',
    'https://example.com/merchant-provider/v1/money.json',
    'https://schemas.supportroute.dev/merchant-provider/v2/money.json',
    'tool-inputs.json#/$defs/%E0%A4%A',
    '',
  ]
  for (const ref of bad) {
    for (const fn of [contractRef, contractValidator, publishedSchema] as ((r: string) => unknown)[]) {
      assert.throws(
        () => fn(ref),
        (e: Error & { code?: string }) =>
          e.code === 'ERR_CONTRACT_UNKNOWN_SCHEMA' && (ref === '' || !e.message.includes(ref)),
        ref,
      )
    }
  }
})

test('a fragment must point at a schema, not at a keyword value', () => {
  // #/$defs is an object of schemas (not a schema); #/.../minimum is a number: neither is a schema to validate with.
  assert.doesNotThrow(() => contractRef('money.json#/properties/amount_minor'))
  assert.throws(() => contractRef('money.json#/required'), { code: 'ERR_CONTRACT_UNKNOWN_SCHEMA' })
})

test('contractValidator is compiled once: relative and absolute refs share one cached function', () => {
  const a = contractValidator('refund-result.json')
  assert.equal(contractValidator('refund-result.json'), a)
  assert.equal(contractValidator(`${CONTRACT_BASE}refund-result.json`), a)
})

test('contractValidator reports paths and keywords, never the offending values', () => {
  const validate = contractValidator('tool-inputs.json#/$defs/refund')
  const secretish = 'srmps_this-must-not-appear'
  const outcome = validate({
    idempotency_key: 'k-1',
    request: { transaction_ref: secretish, amount: usd(2000.5), reason: 'service_issue', dry_run: false },
    [secretish]: 1,
  })
  assert.equal(outcome.valid, false)
  assert.ok(!outcome.valid && !outcome.errors.includes(secretish))
  assert.ok(!outcome.valid && !outcome.errors.includes('2000.5'))
  const refusal = contractValidator('money.json')(usd(2000.5))
  assert.deepEqual(refusal, { valid: false, errors: '/amount_minor must be integer' })
})

test('validation is exact: no coercion of "2000", true or null into the expected types', () => {
  const money = contractValidator('money.json')
  for (const amount of ['2000', true, null, 2000.5, -1, 2 ** 53])
    assert.equal(money(usd(amount)).valid, false, String(amount))
  assert.equal(money(usd(2 ** 53 - 1)).valid, true)
})

test('the refund arguments hold the key rule: a dry run has no key, a real call has one', () => {
  const refund = contractValidator('tool-inputs.json#/$defs/refund')
  const request = { transaction_ref: 'ch_1001', amount: usd(1), reason: 'service_issue' }
  assert.equal(refund({ request: { ...request, dry_run: true } }).valid, true)
  assert.deepEqual(refund({ idempotency_key: 'k', request: { ...request, dry_run: true } }), {
    valid: false,
    errors: '/idempotency_key must not be present',
  })
  assert.equal(refund({ idempotency_key: 'k', request: { ...request, dry_run: false } }).valid, true)
  assert.equal(refund({ request: { ...request, dry_run: false } }).valid, false)
  assert.equal(refund({ idempotency_key: '', request: { ...request, dry_run: false } }).valid, false)
})

test('the date-time pattern takes RFC 3339 with Z or an offset, and nothing looser', () => {
  const query = contractValidator('payment-attempt-query.json')
  for (const t of ['2026-10-15T09:12:44Z', '2026-10-15T09:12:44.123Z', '2026-10-15T09:12:44+03:00']) {
    assert.equal(query({ updated_since: t }).valid, true, t)
  }
  for (const t of [
    '2026-10-15',
    '2026-10-15 09:12:44Z',
    '2026-10-15T09:12:44',
    '2026-13-01T00:00:00Z',
    '2026-10-15t09:12:44z',
  ]) {
    assert.equal(query({ updated_since: t }).valid, false, t)
  }
})
