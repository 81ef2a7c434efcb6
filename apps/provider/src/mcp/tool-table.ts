// The profile's tools as SDK registrations: schemas published as {"type":"object","$ref":<contract $id>}. Output is
// validated by the SDK through an Ajv holding every contract schema; input is validated by runTool itself, because
// the SDK answers failed input validation with a bare text result, and the platform must get the invalid_request
// error envelope. Built once per process, reused by every server.

import { fromJsonSchema, type JsonSchemaValidator, type StandardSchemaWithJSON } from '@modelcontextprotocol/server'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv'
import {
  type ContractValidation,
  contractRef,
  contractValidator,
  createContractAjv,
  PROFILE_TOOLS,
  type ProfileTool,
  publishedSchema,
} from '@tollgate/contract'
import type { ToolAnswer } from '../rules/answers.js'
import type { ProviderRules } from '../rules/provider-rules.js'

export type ToolHandler = (rules: ProviderRules, args: Record<string, unknown>) => Promise<ToolAnswer>

const str = (v: unknown) => v as string

const HANDLERS: Record<string, ToolHandler> = {
  sr_describe: (r) => r.describe(),
  sr_find_customers: (r, a) => r.findCustomers(a as Record<string, string>),
  sr_get_customer: (r, a) => r.getCustomer(str(a.customer_ref)),
  sr_list_transactions: (r, a) => r.listTransactions(str(a.customer_ref)),
  sr_get_transaction: (r, a) => r.getTransaction(str(a.transaction_ref)),
  sr_get_subscription: (r, a) => r.getSubscription(str(a.subscription_ref)),
  sr_refund: (r, a) => r.refund(a as unknown as Parameters<ProviderRules['refund']>[0]),
  sr_cancel_subscription: (r, a) =>
    r.cancelSubscription(a as unknown as Parameters<ProviderRules['cancelSubscription']>[0]),
  sr_get_operation: (r, a) => r.getOperation(str(a.idempotency_key)),
  sr_list_payment_attempts: (r, a) =>
    r.listPaymentAttempts(a as unknown as Parameters<ProviderRules['listPaymentAttempts']>[0]),
}

/**
 * What each tool does, in one sentence (seed 002's tool table): generic clients (Inspector, the official conformance
 * suite) show this text, and the conformance suite's tools-list scenario requires one per tool.
 */
export const TOOL_DESCRIPTIONS: Readonly<Record<string, string>> = {
  sr_describe: 'Describes this merchant provider: its contract version, capabilities and currencies.',
  sr_find_customers:
    'Finds candidate customers by email, phone, customer, transaction or order reference, or card last four digits.',
  sr_get_customer: 'Returns one customer by customer_ref.',
  sr_list_transactions: "Lists a customer's transactions and subscriptions by customer_ref.",
  sr_get_transaction:
    'Returns one transaction by transaction_ref: amount in minor units, state, refund route and refunds so far.',
  sr_get_subscription: 'Returns one subscription by subscription_ref.',
  sr_refund:
    'Refunds all or part of a transaction once per idempotency_key; without an idempotency_key it is a dry run that changes nothing.',
  sr_cancel_subscription:
    'Cancels a subscription now or at period end once per idempotency_key; without an idempotency_key it is a dry run that changes nothing.',
  sr_get_operation:
    'Reports the recorded outcome of a refund or cancellation by its idempotency_key, including pending ones.',
  sr_list_payment_attempts: 'Lists payment attempts updated since a given time, one page at a time.',
}

export interface ToolEntry {
  tool: ProfileTool
  /** The one-sentence description published in tools/list. */
  description: string
  inputSchema: StandardSchemaWithJSON<Record<string, unknown>, Record<string, unknown>>
  outputSchema: StandardSchemaWithJSON<Record<string, unknown>, Record<string, unknown>>
  handler: ToolHandler
  /** The contract's check of the arguments (runTool answers invalid_request when it fails). */
  validateInput: (args: unknown) => ContractValidation
  /** The contract's check of a result object (answerTool answers internal_error when the port's object fails it). */
  validateOutput: (result: unknown) => ContractValidation
}

/** Leaves input validation to runTool: the SDK still publishes the schema, but accepts every argument object. */
const argumentsCheckedByRunTool = {
  getValidator<T>(): JsonSchemaValidator<T> {
    return (input: unknown) => ({ valid: true, data: input as T, errorMessage: undefined })
  },
}

let table: readonly ToolEntry[] | undefined

/** The tool table (compiled once per process: Ajv compilation is the expensive part). */
export function toolTable(): readonly ToolEntry[] {
  if (table !== undefined) return table
  const validator = new AjvJsonSchemaValidator(createContractAjv())
  table = PROFILE_TOOLS.map((tool) => {
    const handler = HANDLERS[tool.name]
    if (handler === undefined) throw new TypeError(`no handler for profile tool ${tool.name}`)
    const description = TOOL_DESCRIPTIONS[tool.name]
    if (description === undefined) throw new TypeError(`no description for profile tool ${tool.name}`)
    return {
      tool,
      description,
      inputSchema: fromJsonSchema<Record<string, unknown>>(
        publishedSchema(contractRef(tool.inputRef)),
        argumentsCheckedByRunTool,
      ),
      outputSchema: fromJsonSchema<Record<string, unknown>>(publishedSchema(contractRef(tool.outputRef)), validator),
      handler,
      validateInput: contractValidator(tool.inputRef),
      validateOutput: contractValidator(tool.outputRef),
    }
  })
  return table
}

/** The tools a provider lists: required ones, and capability tools only when sr_describe declares the capability. */
export function listedTools(capabilities: Record<string, unknown>): readonly ToolEntry[] {
  return toolTable().filter((e) => e.tool.capability === undefined || capabilities[e.tool.capability] === true)
}
