// The store layer: the key store (SQLite or PostgreSQL), the demo ledger's store over it, and the retention purge.
export {
  type ApplyOptions,
  type ClaimingOptions,
  type DemoLedgerStore,
  demoLedgerStore,
  type LedgerApplyResult,
  type LedgerDoc,
  type LedgerMutation,
} from './ledger-store.js'
export { openPostgresStore, type PostgresStoreOptions } from './postgres-store.js'
export { MIN_RETENTION_DAYS, purgeExpired, startPurgeJob } from './purge.js'
export {
  openSqliteStore,
  type SqliteDurability,
  type SqliteSettings,
  type SqliteStore,
  type SqliteStoreOptions,
} from './sqlite-store.js'
export type {
  ClaimRequest,
  ClaimResult,
  KeyFinish,
  OperationKind,
  OperationRow,
  OperationStatus,
  Outcome,
  Store,
} from './store.js'
