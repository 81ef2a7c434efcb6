// Each profile tool's argument and result types, from the generated contract types (types.generated.ts) by the
// refs PROFILE_TOOLS names; test/types-generated.test.ts checks these refs against PROFILE_TOOLS.
import type { ContractTypes } from './types.generated.js'

/** Each profile tool's inputRef and outputRef, as literal types (the same refs as PROFILE_TOOLS). */
export const PROFILE_TOOL_REFS = Object.freeze({
  sr_describe: { inputRef: 'tool-inputs.json#/$defs/describe', outputRef: 'describe.json' },
  sr_find_customers: { inputRef: 'customer-query.json', outputRef: 'customer-candidates.json' },
  sr_get_customer: { inputRef: 'tool-inputs.json#/$defs/get_customer', outputRef: 'customer.json' },
  sr_list_transactions: { inputRef: 'tool-inputs.json#/$defs/list_transactions', outputRef: 'transaction-list.json' },
  sr_get_transaction: { inputRef: 'tool-inputs.json#/$defs/get_transaction', outputRef: 'transaction.json' },
  sr_get_subscription: { inputRef: 'tool-inputs.json#/$defs/get_subscription', outputRef: 'subscription.json' },
  sr_refund: { inputRef: 'tool-inputs.json#/$defs/refund', outputRef: 'refund-result.json' },
  sr_cancel_subscription: { inputRef: 'tool-inputs.json#/$defs/cancel_subscription', outputRef: 'cancel-result.json' },
  sr_get_operation: { inputRef: 'tool-inputs.json#/$defs/get_operation', outputRef: 'operation.json' },
  sr_list_payment_attempts: { inputRef: 'payment-attempt-query.json', outputRef: 'payment-attempt-list.json' },
} as const satisfies Record<string, { inputRef: keyof ContractTypes; outputRef: keyof ContractTypes }>)

/** The name of a profile tool (sr_describe … sr_list_payment_attempts). */
export type ProfileToolName = keyof typeof PROFILE_TOOL_REFS

/** The arguments a profile tool takes (`ToolArguments<'sr_refund'>` is RefundArguments). */
export type ToolArguments<N extends ProfileToolName> = ContractTypes[(typeof PROFILE_TOOL_REFS)[N]['inputRef']]

/** The object a profile tool answers (`ToolResult<'sr_get_transaction'>` is Transaction). */
export type ToolResult<N extends ProfileToolName> = ContractTypes[(typeof PROFILE_TOOL_REFS)[N]['outputRef']]
