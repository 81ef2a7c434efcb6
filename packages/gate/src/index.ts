// @tollgate/gate — everything exported here is public API. Helpers live in src/internal/.
// A gate in front of a remote MCP server: audience-bound bearer tokens, scopes concealed at dispatch,
// a per-caller budget charged first on every tools/call, and a Host/Origin allow-list.

export {
  type Admission,
  type Audience,
  type AudienceOptions,
  createAudience,
  type KeySource,
  type TokenAlgorithm,
} from './audience.js'
export { type Clock, type ManualClock, manualClock, monotonicClock, wallClock } from './budget/clock.js'
export {
  type Budget,
  type BudgetDecision,
  type BudgetLeft,
  type BudgetPolicy,
  type BudgetRefusal,
  budgetPolicy,
  type ChargedFrom,
  FairBudget,
  type FairBudgetOptions,
  NaiveBucket,
  OpenFairBudget,
  type OpenFairBudgetOptions,
} from './budget/fair-budget.js'
export {
  type BudgetStoreEvent,
  budgetClusterOptions,
  budgetRedisOptions,
  DEFAULT_COMMAND_TIMEOUT_MS,
  DEFAULT_CONNECT_TIMEOUT_MS,
  RedisBudgetStore,
  type RedisBudgetStoreOptions,
} from './budget/redis-store.js'
export {
  type BudgetStore,
  type FairPlan,
  type FairTake,
  type FairTaken,
  MEMORY_MAX_CALLERS,
  MemoryBudgetStore,
  type NaivePlan,
  type NaiveTaken,
  type OpenFairPlan,
  type ReserveShare,
} from './budget/store.js'
export {
  BudgetConfigError,
  BudgetStoreError,
  CallerQueueFull,
  GateConfigError,
  GateError,
  type GateErrorCode,
  KeysUnavailable,
  TokenRefused,
} from './errors.js'
export { type CallScheduler, FairScheduler, type FairSchedulerOptions } from './fair-scheduler.js'
export {
  allowListFor,
  defaultAllowList,
  type HostAllowList,
  type HostVerdict,
  hostGuard,
  loopbackAllowList,
} from './host-allow-list.js'
export { createGate, type Gate, type GateEvent, type GateOptions } from './http-gate.js'
export { createInProcessIssuer, type InProcessIssuer, type MintOptions } from './in-process-issuer.js'
export { type KeySetFetchOutcome, RemoteKeySet, type RemoteKeySetOptions } from './remote-key-set.js'
export {
  advertisedScopeList,
  bearerChallenge,
  type ProtectedResourceMetadata,
  protectedResourceMetadata,
  type ResourceIdentity,
  resourceIdentity,
  UNAUTHORIZED_BODY,
} from './resource-metadata.js'
export { RedisSessionStore } from './session-store-redis.js'
export { type CallReport, type GatedTool, type GatedToolAnswer, NO_SUCH_TOOL, OVER_BUDGET } from './tools.js'
