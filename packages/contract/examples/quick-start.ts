// Quick start: validate a tool's arguments and result against the contract, publish its schemas, map an error.
// Run: node --conditions=@tollgate/source --import tsx packages/contract/examples/quick-start.ts
import { contractValidator, errorHttpStatus, PROFILE_TOOLS, publishedSchema } from '@tollgate/contract'

const refund = PROFILE_TOOLS.find((tool) => tool.name === 'sr_refund')!

// What a server publishes in tools/list for this tool.
console.log(JSON.stringify({ name: refund.name, inputSchema: publishedSchema(refund.inputRef) }))

// Arguments as the platform sends them (a real refund carries an idempotency_key; a dry run must not).
const args = {
  idempotency_key: 'tenant:ticket:t-1:refund:r-1',
  request: {
    transaction_ref: 'ch_1001',
    amount: { amount_minor: 2000, currency: 'USD' },
    reason: 'service_issue',
    dry_run: false,
  },
}
console.log('arguments', JSON.stringify(contractValidator(refund.inputRef)(args)))

// A float amount is not money: rejected, and the message names the path, not the value.
const floatArgs = { ...args, request: { ...args.request, amount: { amount_minor: 2000.5, currency: 'USD' } } }
console.log('float amount', JSON.stringify(contractValidator(refund.inputRef)(floatArgs)))

// The result a server returns in structuredContent.
const result = {
  idempotency_key: args.idempotency_key,
  status: 'succeeded',
  transaction_ref: 'ch_1001',
  amount: { amount_minor: 2000, currency: 'USD' },
  refund_ref: 're_77',
  processed_at: '2026-10-15T09:12:44Z',
}
console.log('result', JSON.stringify(contractValidator(refund.outputRef)(result)))

// A refusal travels as an error envelope (isError: true); its code maps to the REST status.
console.log('amount_exceeds_refundable ->', errorHttpStatus('amount_exceeds_refundable'))
