// @tollgate/operability — everything exported here is public API.
// What an operator runs a server with: health and readiness, metrics on an admin listener, graceful shutdown.
export {
  type AdminServerOptions,
  type HealthEndpoints,
  type RunningAdminServer,
  startAdminServer,
} from './admin-server.js'
export { Closers } from './closers.js'
export { CheckTimeoutError, OperabilityError, type OperabilityErrorCode } from './errors.js'
export {
  type FailedCheck,
  Health,
  type HealthOptions,
  isHealthPath,
  LIVEZ_PATH,
  READYZ_PATH,
  type ReadinessChange,
  type ReadinessCheck,
} from './health.js'
export {
  type CounterChild,
  FastCounter,
  FastHistogram,
  type HistogramChild,
} from './instruments.js'
export {
  BoundChildren,
  CappedLabel,
  createMetricsRegistry,
  KnownLabel,
  type MetricsRegistryOptions,
  OTHER_LABEL,
  REQUEST_SECONDS_BUCKETS,
  STORE_SECONDS_BUCKETS,
} from './metrics.js'
export { serialReloader } from './reloader.js'
export { GracefulServer, type GracefulShutdownOptions, type ShutdownReport } from './shutdown.js'
