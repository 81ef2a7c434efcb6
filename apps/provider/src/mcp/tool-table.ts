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

export interface ToolEntry {
  tool: ProfileTool
  inputSchema: StandardSchemaWithJSON<Record<string, unknown>, Record<string, unknown>>
  outputSchema: StandardSchemaWithJSON<Record<string, unknown>, Record<string, unknown>>
  handler: ToolHandler
  /** The contract's check of the arguments (runTool answers invalid_request when it fails). */
  validateInput: (args: unknown) => ContractValidation
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
    return {
      tool,
      inputSchema: fromJsonSchema<Record<string, unknown>>(
        publishedSchema(contractRef(tool.inputRef)),
        argumentsCheckedByRunTool,
      ),
      outputSchema: fromJsonSchema<Record<string, unknown>>(publishedSchema(contractRef(tool.outputRef)), validator),
      handler,
      validateInput: contractValidator(tool.inputRef),
    }
  })
  return table
}

/** The tools a provider lists: required ones, and capability tools only when sr_describe declares the capability. */
export function listedTools(capabilities: Record<string, unknown>): readonly ToolEntry[] {
  return toolTable().filter((e) => e.tool.capability === undefined || capabilities[e.tool.capability] === true)
}
