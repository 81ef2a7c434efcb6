// @tollgate/contract — merchant-provider/v1: the JSON Schemas (2020-12) served from local copies by $id, an Ajv
// wired with them, the MCP profile's tool table, the wire error table and the examples.
// Everything exported here is public API; implementation details live in the other files.

export {
  CONTRACT_ERROR_CODES,
  ContractError,
  type ContractErrorCode,
  ExamplesUnreadableError,
  SchemaLoadError,
  UnknownErrorCodeError,
  UnknownSchemaError,
} from './errors.js'
export { type ContractExample, listExamples } from './examples.js'
export { PROFILE_TOOLS, type ProfileTool } from './profile.js'
export { CONTRACT_BASE, contractRef, publishedSchema, schemaDocuments } from './schemas.js'
export {
  type ContractJsonSchemaValidator,
  contractJsonSchemaValidator,
  type SdkValidationResult,
} from './sdk-validator.js'
export type { ProfileToolName, ToolArguments, ToolResult } from './tool-types.js'
// The contract's objects as TypeScript types, generated from schemas/ (scripts/generate-types.ts).
export type {
  BillingInterval,
  CancelRequest,
  CancelResult,
  CancelSubscriptionArguments,
  Capabilities,
  Chargeback,
  ContractTypes,
  Customer,
  CustomerCandidate,
  CustomerCandidates,
  CustomerQuery,
  Describe,
  DescribeArguments,
  ErrorEnvelope,
  GetCustomerArguments,
  GetOperationArguments,
  GetSubscriptionArguments,
  GetTransactionArguments,
  LastCharge,
  ListTransactionsArguments,
  Money,
  Operation,
  OperationRefusal,
  PaymentAttempt,
  PaymentAttemptList,
  PaymentAttemptQuery,
  RefundArguments,
  RefundRecord,
  RefundRequest,
  RefundResult,
  Subscription,
  Transaction,
  TransactionList,
  WireError,
} from './types.generated.js'
export { type ContractValidation, contractFaults, contractValidator, createContractAjv } from './validator.js'
export {
  ERROR_CODES,
  errorHttpStatus,
  isRefusalCode,
  isWireErrorCode,
  MERCHANT_REFUSAL_PATTERN,
  REFUSAL_CODES,
} from './wire-errors.js'
