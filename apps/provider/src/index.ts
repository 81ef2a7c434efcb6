// @tollgate/provider: a merchant-provider/v1 server over MCP (both eras, official SDK v2) and REST, one rules engine.
// Everything exported here is public API.

// The contract objects a BillingPort answers (from @tollgate/contract), so an adapter imports everything from here.
export type {
  Customer,
  CustomerCandidate,
  CustomerQuery,
  Describe,
  PaymentAttempt,
  PaymentAttemptList,
  RefundRecord,
  Subscription,
  Transaction,
  TransactionList,
} from '@tollgate/contract'
// TLS for `tls` and setTls (from @tollgate/mcp-endpoint), so a server imports everything from here.
export {
  checkTlsCredentials,
  readTlsFiles,
  type TlsCredentials,
  TlsCredentialsError,
} from '@tollgate/mcp-endpoint'
export { DemoLedger, type DemoLedgerOptions } from './billing/demo-ledger.js'
export { demoFixtures } from './billing/fixtures.js'
export type {
  BillingPort,
  BillingRefusal,
  CancelCommand,
  CancelOutcome,
  ContractObject,
  LookupOutcome,
  Money,
  PaymentAttemptQuery,
  RefundCommand,
  RefundOutcome,
} from './billing/port.js'
export {
  DemoInProductionError,
  DescribeInvalidError,
  NoBillingError,
  NoSecretError,
  PortIncompleteError,
  PROVIDER_ERROR_CODES,
  ProviderError,
  type ProviderErrorCode,
  SecretsError,
  type SecretsErrorCode,
  StoreError,
} from './errors.js'
export {
  correlationOf,
  listedTools,
  SERVER_INFO,
  toolTable,
} from './mcp/index.js'
export { type ProviderOptions, type RunningProvider, type StoreOptions, startProvider } from './provider.js'
export {
  CORRELATION_HEADERS,
  IDEMPOTENCY_KEY_HEADER,
  REST_ROUTES,
  type RestMethod,
  type RestRoute,
} from './rest/index.js'
export type { ToolAnswer } from './rules/answers.js'
export { type CancelArgs, ProviderRules, type RefundArgs, type RulesOptions } from './rules/provider-rules.js'
export { cancelRefusal, refundableMinor, refundRefusal } from './rules/refusals.js'
export { checkSecretList, readSecretsFile } from './secrets.js'
export {
  type ApplyOptions,
  type ClaimingOptions,
  type ClaimRequest,
  type ClaimResult,
  type DemoLedgerStore,
  demoLedgerStore,
  type KeyFinish,
  type LedgerApplyResult,
  type LedgerDoc,
  type LedgerMutation,
  MIN_RETENTION_DAYS,
  type OperationKind,
  type OperationRow,
  type OperationStatus,
  type Outcome,
  openPostgresStore,
  openSqliteStore,
  type PostgresStoreOptions,
  purgeExpired,
  type SqliteDurability,
  type SqliteSettings,
  type SqliteStore,
  type SqliteStoreOptions,
  type Store,
  startPurgeJob,
} from './store/index.js'
