// @tollgate/operability — everything exported here is public API.
// What an operator runs a server with: health and readiness, metrics on an admin listener, graceful shutdown.
export {
  type AdminServerOptions,
  type HealthEndpoints,
  type RunningAdminServer,
  startAdminServer,
} from './admin-server.js'
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
