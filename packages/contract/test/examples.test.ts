import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CONTRACT_BASE, contractValidator, listExamples, schemaDocuments } from '@tollgate/contract'
import { parsePlain } from '@tollgate/strict-json'
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js'

const examples = listExamples()
const valid = examples.filter((e) => e.valid)
const invalid = examples.filter((e) => !e.valid)

// The strict reader, as the platform reads a provider's bytes: duplicate keys and 2000.0 are refused here.
const read = (bytes: Buffer) => parsePlain(bytes, { maxBytes: 1 << 20, maxDepth: 64, integersOnly: true })

// A second engine with allErrors, so a test can look for the relevant error among all of them.
const everyError = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true })
for (const doc of schemaDocuments) everyError.addSchema(doc)
function errorsOf(schema: string, value: unknown): ErrorObject[] {
  const validate = everyError.compile({ $ref: CONTRACT_BASE + schema })
  return validate(value) ? [] : (validate.errors ?? [])
}

test('every valid example reads strictly (integers only, no duplicate keys) and validates', () => {
  assert.ok(valid.length >= 50, `${valid.length} valid examples`)
  for (const ex of valid) {
    const value = read(ex.bytes)
    const outcome = contractValidator(ex.schema)(value)
    assert.deepEqual(outcome, { valid: true }, `${ex.schema} ${ex.name}`)
    assert.deepEqual(errorsOf(ex.schema, value), [], `${ex.schema} ${ex.name}`)
  }
})

test('every schema and every tool-inputs $def has at least one valid example', () => {
  const covered = new Set(valid.map((e) => e.schema))
  const toolInputs = schemaDocuments.find((d) => d.$id === `${CONTRACT_BASE}tool-inputs.json`)!
  const wanted = [
    ...schemaDocuments
      .map((d) => (d.$id as string).slice(CONTRACT_BASE.length))
      .filter((f) => f !== 'tool-inputs.json'),
    ...Object.keys(toolInputs.$defs as object).map((def) => `tool-inputs.json#/$defs/${def}`),
  ]
  for (const schema of wanted) assert.ok(covered.has(schema), `no valid example for ${schema}`)
})

// [keyword, instancePath, missing/additional property] each invalid example must be rejected with (among others).
// A new invalid example needs an entry here: the test fails on any example without one.
const EXPECTED: Record<string, [string, string, string?]> = {
  'cancel-request.json at-period-end-as-string': ['type', '/at_period_end'],
  'cancel-request.json missing-at-period-end': ['required', '', 'at_period_end'],
  'cancel-result.json dry-run-with-effective-at': ['type', '/effective_at'],
  'cancel-result.json succeeded-without-effective-at': ['type', '/effective_at'],
  'cancel-result.json unknown-status': ['enum', '/status'],
  'customer.json missing-prior-chargebacks': ['required', '', 'prior_chargebacks'],
  'customer.json unknown-account-status': ['enum', '/account_status'],
  'customer-candidates.json extra-property-on-candidate': ['additionalProperties', '/candidates/0', 'email'],
  'customer-candidates.json missing-candidates': ['required', '', 'candidates'],
  'customer-query.json card-last4-too-long': ['pattern', '/card_last4'],
  'customer-query.json empty': ['minProperties', ''],
  'customer-query.json unknown-identifier': ['additionalProperties', '', 'ip_address'],
  'describe.json capability-not-boolean': ['type', '/capabilities/payment_attempts'],
  'describe.json lower-case-currency': ['pattern', '/currencies/0'],
  'describe.json missing-capability': ['required', '/capabilities', 'outcome_callbacks'],
  'describe.json no-currency': ['minItems', '/currencies'],
  'describe.json other-major-version': ['pattern', '/contract_version'],
  'error.json extra-property': ['additionalProperties', '', 'status'],
  'error.json merchant-code-upper-case': ['pattern', '/error/code'],
  'error.json missing-retryable': ['required', '/error', 'retryable'],
  'error.json retryable-as-string': ['type', '/error/retryable'],
  'error.json unknown-code': ['enum', '/error/code'],
  'money.json amount-as-string': ['type', '/amount_minor'],
  'money.json extra-property': ['additionalProperties', '', 'decimal'],
  'money.json float-amount': ['type', '/amount_minor'],
  'money.json lower-case-currency': ['pattern', '/currency'],
  'money.json missing-currency': ['required', '', 'currency'],
  'money.json negative-amount': ['minimum', '/amount_minor'],
  'operation.json dry-run-result': ['enum', '/result/status'],
  'operation.json failed-without-refusal': ['required', '', 'refusal'],
  'operation.json missing-key': ['required', '', 'idempotency_key'],
  'operation.json refund-with-cancel-result': ['additionalProperties', '/result', 'subscription_ref'],
  'operation.json succeeded-without-result': ['required', '', 'result'],
  'operation.json succeeded-with-pending-result': ['const', '/result/status'],
  'operation.json unknown-refusal-code': ['enum', '/refusal/code'],
  'operation.json unknown-status': ['enum', '/status'],
  'operation.json unknown-with-result': ['false schema', '/result'],
  'payment-attempt-list.json missing-next-cursor': ['required', '', 'next_cursor'],
  'payment-attempt-list.json unknown-attempt-status': ['enum', '/payment_attempts/0/status'],
  'payment-attempt-query.json date-only': ['pattern', '/updated_since'],
  'payment-attempt-query.json missing-updated-since': ['required', '', 'updated_since'],
  'payment-attempt-query.json zero-limit': ['minimum', '/limit'],
  'refund-record.json bad-timestamp': ['pattern', '/at'],
  'refund-record.json missing-reversed-at': ['required', '', 'reversed_at'],
  'refund-request.json float-amount': ['type', '/amount/amount_minor'],
  'refund-request.json missing-dry-run': ['required', '', 'dry_run'],
  'refund-request.json reason-not-a-code': ['pattern', '/reason'],
  'refund-request.json zero-amount': ['minimum', '/amount/amount_minor'],
  'refund-result.json dry-run-with-key': ['type', '/idempotency_key'],
  'refund-result.json dry-run-with-refund-ref': ['type', '/refund_ref'],
  'refund-result.json dry-run-with-processed-at': ['false schema', '/processed_at'],
  'refund-result.json float-amount': ['type', '/amount/amount_minor'],
  'refund-result.json lower-case-currency': ['pattern', '/amount/currency'],
  'refund-result.json missing-refund-ref': ['required', '', 'refund_ref'],
  'refund-result.json negative-amount': ['minimum', '/amount/amount_minor'],
  'refund-result.json succeeded-without-key': ['type', '/idempotency_key'],
  'refund-result.json succeeded-without-processed-at': ['required', '', 'processed_at'],
  'refund-result.json unknown-status': ['enum', '/status'],
  'subscription.json missing-nullable-field': ['required', '', 'trial_end'],
  'subscription.json unknown-interval-unit': ['enum', '/billing_interval/unit'],
  'subscription.json unknown-phase': ['enum', '/phase'],
  'subscription.json zero-interval-count': ['minimum', '/billing_interval/count'],
  'tool-inputs.json#/$defs/cancel_subscription dry-run-with-key': ['false schema', '/idempotency_key'],
  'tool-inputs.json#/$defs/cancel_subscription missing-subscription-ref': ['required', '', 'subscription_ref'],
  'tool-inputs.json#/$defs/cancel_subscription real-without-key': ['required', '', 'idempotency_key'],
  'tool-inputs.json#/$defs/describe extra-property': ['additionalProperties', '', 'verbose'],
  'tool-inputs.json#/$defs/get_customer missing-customer-ref': ['required', '', 'customer_ref'],
  'tool-inputs.json#/$defs/get_operation missing-key': ['required', '', 'idempotency_key'],
  'tool-inputs.json#/$defs/get_subscription ref-not-string': ['type', '/subscription_ref'],
  'tool-inputs.json#/$defs/get_transaction empty-ref': ['minLength', '/transaction_ref'],
  'tool-inputs.json#/$defs/list_transactions extra-property': ['additionalProperties', '', 'limit'],
  'tool-inputs.json#/$defs/refund dry-run-with-key': ['false schema', '/idempotency_key'],
  'tool-inputs.json#/$defs/refund extra-property': ['additionalProperties', '', 'amount'],
  'tool-inputs.json#/$defs/refund float-amount': ['type', '/request/amount/amount_minor'],
  'tool-inputs.json#/$defs/refund lower-case-currency': ['pattern', '/request/amount/currency'],
  'tool-inputs.json#/$defs/refund missing-request': ['required', '', 'request'],
  'tool-inputs.json#/$defs/refund negative-amount': ['minimum', '/request/amount/amount_minor'],
  'tool-inputs.json#/$defs/refund real-without-key': ['required', '', 'idempotency_key'],
  'transaction.json bad-card-last4': ['pattern', '/card_last4'],
  'transaction.json extra-property': ['additionalProperties', '', 'risk_score'],
  'transaction.json float-amount': ['type', '/amount/amount_minor'],
  'transaction.json missing-nullable-field': ['required', '', 'settlement'],
  'transaction.json negative-refund': ['minimum', '/refunds/0/amount/amount_minor'],
  'transaction.json unknown-charge-type': ['enum', '/charge_type'],
  'transaction.json unknown-refund-route': ['enum', '/refund_route'],
  'transaction.json unknown-state': ['enum', '/state'],
  'transaction-list.json invalid-transaction': ['enum', '/transactions/0/state'],
  'transaction-list.json missing-subscriptions': ['required', '', 'subscriptions'],
}

test('every invalid example is rejected, with the error it was written to provoke', () => {
  const seen = new Set<string>()
  for (const ex of invalid) {
    const key = `${ex.schema} ${ex.name}`
    seen.add(key)
    const expected = EXPECTED[key]
    assert.ok(expected, `no expected error pinned for invalid example ${key}`)
    // JSON.parse, not the strict reader: some cases (2000.5) are about what the schema refuses.
    const value: unknown = JSON.parse(ex.bytes.toString('utf8'))
    const outcome = contractValidator(ex.schema)(value)
    assert.equal(outcome.valid, false, key)
    const [keyword, path, property] = expected
    const hit = errorsOf(ex.schema, value).some(
      (e) =>
        e.keyword === keyword &&
        e.instancePath === path &&
        (property === undefined || e.params.missingProperty === property || e.params.additionalProperty === property),
    )
    assert.ok(hit, `${key}: expected ${keyword} at '${path}'`)
  }
  assert.deepEqual(
    Object.keys(EXPECTED).filter((k) => !seen.has(k)),
    [],
    'pinned cases without an example file',
  )
})

test('the invalid examples cover float, negative and string amounts, lower-case currency, a missing field, an unknown enum value and an extra property', () => {
  const kinds = new Set(invalid.map((e) => EXPECTED[`${e.schema} ${e.name}`]?.[0]))
  for (const keyword of ['type', 'minimum', 'pattern', 'required', 'enum', 'additionalProperties']) {
    assert.ok(kinds.has(keyword), keyword)
  }
  for (const key of ['money.json float-amount', 'money.json negative-amount', 'money.json lower-case-currency']) {
    assert.ok(
      invalid.some((e) => `${e.schema} ${e.name}` === key),
      key,
    )
  }
})

test('a schema cannot see 2000.0: that lexeme is the strict reader`s to refuse', () => {
  const bytes = Buffer.from('{"amount_minor":2000.0,"currency":"USD"}')
  // What ajv gets after an ordinary parse is the integer 2000, which the schema rightly accepts ...
  assert.deepEqual(contractValidator('money.json')(JSON.parse(bytes.toString())), { valid: true })
  // ... so the refusal belongs to the reader (toPlain/parsePlain with integersOnly), before validation.
  assert.throws(() => read(bytes), { code: 'ERR_STRICT_JSON_NOT_INTEGER' })
})

test('listExamples returns each file once with its bytes, and names the schema by relative ref', () => {
  const paths = examples.map((e) => e.path)
  assert.equal(new Set(paths).size, paths.length)
  for (const ex of examples) {
    assert.ok(ex.path.endsWith(`${ex.name}.json`))
    assert.ok(ex.path.includes(ex.valid ? '/examples/v1/' : '/examples/invalid/'))
    assert.ok(ex.bytes.length > 0)
    assert.doesNotThrow(() => contractValidator(ex.schema), ex.schema)
  }
  assert.ok(examples.some((e) => e.schema === 'tool-inputs.json#/$defs/refund' && e.name === 'seed' && e.valid))
})
