import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  CONTRACT_BASE,
  ERROR_CODES,
  errorHttpStatus,
  isRefusalCode,
  isWireErrorCode,
  REFUSAL_CODES,
  schemaDocuments,
} from '@tollgate/contract'

// Pins: the seed's "Kod / Durum" table and the refusal codes of its section 6 references, as literals.

test('errorHttpStatus maps each error code to the seed`s HTTP status', () => {
  const table: [string, number][] = [
    ['invalid_request', 400],
    ['credentials_rejected', 401],
    ['not_found', 404],
    ['idempotency_conflict', 409],
    ['in_progress', 409],
    ['rate_limited', 429],
    ['internal_error', 500],
    ['unavailable', 503],
  ]
  for (const [code, status] of table) assert.equal(errorHttpStatus(code), status, code)
  assert.deepEqual(
    [...ERROR_CODES],
    table.map(([code]) => code),
  )
})

test('every refusal code and every x_ code maps to 422', () => {
  const refusals = [
    'amount_exceeds_refundable',
    'currency_mismatch',
    'not_refundable',
    'already_canceled',
    'subscription_not_active',
    'account_restricted',
    'merchant_hold',
  ]
  assert.deepEqual([...REFUSAL_CODES], refusals)
  for (const code of [...refusals, 'x_fraud_rules', 'x_1', `x_${'a'.repeat(62)}`]) {
    assert.equal(errorHttpStatus(code), 422, code)
    assert.equal(isRefusalCode(code), true, code)
  }
})

test('anything else is not a wire code: ERR_CONTRACT_UNKNOWN_ERROR_CODE, and the message does not echo it', () => {
  for (const code of [
    '',
    'x_',
    'X_FRAUD',
    'x_Fraud',
    'x-fraud',
    `x_${'a'.repeat(63)}`,
    'payment_required',
    'NOT_FOUND',
  ]) {
    assert.equal(isWireErrorCode(code), false, code)
    assert.throws(
      () => errorHttpStatus(code),
      (e: Error & { code?: string }) =>
        e.code === 'ERR_CONTRACT_UNKNOWN_ERROR_CODE' && (code === '' || !e.message.includes(code)),
    )
  }
  assert.throws(() => errorHttpStatus(undefined as unknown as string), { code: 'ERR_CONTRACT_UNKNOWN_ERROR_CODE' })
})

test('the schemas list the same codes as the table (error.json all, operation.json refusals only)', () => {
  const dig = (file: string, ...path: (string | number)[]): unknown =>
    path.reduce<unknown>(
      (node, key) => (node as Record<string | number, unknown>)[key],
      schemaDocuments.find((d) => d.$id === CONTRACT_BASE + file),
    )
  const errorCode = ['error.json', 'properties', 'error', 'properties', 'code', 'anyOf'] as const
  assert.deepEqual(dig(...errorCode, 0, 'enum'), [...ERROR_CODES, ...REFUSAL_CODES])
  assert.equal(dig(...errorCode, 1, 'pattern'), '^x_[a-z0-9_]+$')
  assert.equal(dig(...errorCode, 1, 'maxLength'), 64)
  const refusalCode = ['operation.json', 'properties', 'refusal', 'properties', 'code', 'anyOf'] as const
  assert.deepEqual(dig(...refusalCode, 0, 'enum'), [...REFUSAL_CODES])
  assert.equal(dig(...refusalCode, 1, 'pattern'), '^x_[a-z0-9_]+$')
})
