// Test-only helpers shared by the workspaces' suites (a private package; never a runtime dependency).
export { probeRedis, type RedisProbe } from './redis.js'
