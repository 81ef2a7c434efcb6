// Test-only helpers shared by the workspaces' suites (a private package; never a runtime dependency).
export { type HaproxyOptions, type RunningHaproxy, startHaproxy } from './haproxy.js'
export { type HttpsFetch, httpsFetch } from './https-fetch.js'
export { DEFAULT_PG_URL, type PostgresProbe, probePostgres } from './postgres.js'
export {
  freeLoopbackPort,
  PROMETHEUS,
  PROMTOOL,
  parseExposition,
  probePrometheus,
  probePromtool,
  promtoolCheckMetrics,
  type RunningPrometheus,
  type Sample,
  type ScrapeTarget,
  sampleSum,
  startPrometheus,
} from './prometheus.js'
export { probeRedis, type RedisProbe } from './redis.js'
export {
  NO_REDIS_HA,
  type RedisClusterSet,
  type RedisNodeProcess,
  type RedisSentinelSet,
  redisCli,
  startRedisCluster,
  startRedisSentinelSet,
} from './redis-ha.js'
export { findSharedData, REPO_ROOT, type SharedData, sharedDir } from './shared-data.js'
export { makeTestCertificateAuthority, type TestCertificate, type TestCertificateAuthority } from './tls.js'
