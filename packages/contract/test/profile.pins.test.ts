import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CONTRACT_BASE, PROFILE_TOOLS, publishedSchema, schemaDocuments } from '@tollgate/contract'

// Pins: literals copied from seed 002's tables ("Araçlar", "Araç Şemalarını Yayımlama"), never imported from src.

test('CONTRACT_BASE is the seed`s base', () => {
  assert.equal(CONTRACT_BASE, 'https://schemas.supportroute.dev/merchant-provider/v1/')
})

test('PROFILE_TOOLS is the seed`s table: 10 tools in order, refs and capabilities', () => {
  assert.deepEqual(
    PROFILE_TOOLS.map((t) => ({ ...t })),
    [
      { name: 'sr_describe', inputRef: 'tool-inputs.json#/$defs/describe', outputRef: 'describe.json' },
      { name: 'sr_find_customers', inputRef: 'customer-query.json', outputRef: 'customer-candidates.json' },
      { name: 'sr_get_customer', inputRef: 'tool-inputs.json#/$defs/get_customer', outputRef: 'customer.json' },
      {
        name: 'sr_list_transactions',
        inputRef: 'tool-inputs.json#/$defs/list_transactions',
        outputRef: 'transaction-list.json',
      },
      {
        name: 'sr_get_transaction',
        inputRef: 'tool-inputs.json#/$defs/get_transaction',
        outputRef: 'transaction.json',
      },
      {
        name: 'sr_get_subscription',
        inputRef: 'tool-inputs.json#/$defs/get_subscription',
        outputRef: 'subscription.json',
        capability: 'cancel_subscription',
      },
      { name: 'sr_refund', inputRef: 'tool-inputs.json#/$defs/refund', outputRef: 'refund-result.json' },
      {
        name: 'sr_cancel_subscription',
        inputRef: 'tool-inputs.json#/$defs/cancel_subscription',
        outputRef: 'cancel-result.json',
        capability: 'cancel_subscription',
      },
      { name: 'sr_get_operation', inputRef: 'tool-inputs.json#/$defs/get_operation', outputRef: 'operation.json' },
      {
        name: 'sr_list_payment_attempts',
        inputRef: 'payment-attempt-query.json',
        outputRef: 'payment-attempt-list.json',
        capability: 'payment_attempts',
      },
    ],
  )
  assert.ok(Object.isFrozen(PROFILE_TOOLS) && PROFILE_TOOLS.every((t) => Object.isFrozen(t)))
})

test('publishedSchema is {"type":"object","$ref":<absolute $id>} exactly as the seed shows for sr_refund', () => {
  assert.equal(
    JSON.stringify(publishedSchema('tool-inputs.json#/$defs/refund')),
    '{"type":"object","$ref":"https://schemas.supportroute.dev/merchant-provider/v1/tool-inputs.json#/$defs/refund"}',
  )
  assert.equal(
    JSON.stringify(publishedSchema('refund-result.json')),
    '{"type":"object","$ref":"https://schemas.supportroute.dev/merchant-provider/v1/refund-result.json"}',
  )
})

test('the contract`s $ids are pinned', () => {
  assert.deepEqual(schemaDocuments.map((d) => d.$id).sort(), [
    'https://schemas.supportroute.dev/merchant-provider/v1/cancel-request.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/cancel-result.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/customer-candidates.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/customer-query.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/customer.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/describe.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/error.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/money.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/operation.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/payment-attempt-list.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/payment-attempt-query.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/refund-record.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/refund-request.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/refund-result.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/subscription.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/tool-inputs.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/transaction-list.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/transaction.json',
  ])
})
