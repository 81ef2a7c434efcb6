/** One tool of the MCP profile (the seed's table): refs are relative to CONTRACT_BASE. */
export interface ProfileTool {
  name: string
  inputRef: string
  outputRef: string
  /** Listed only when sr_describe declares this capability; absent = always listed (required tool). */
  capability?: 'cancel_subscription' | 'payment_attempts'
}

/** The profile's 10 tools in the seed's table order. */
export const PROFILE_TOOLS: readonly ProfileTool[] = Object.freeze(
  (
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
    ] satisfies ProfileTool[]
  ).map((t) => Object.freeze(t)),
)
