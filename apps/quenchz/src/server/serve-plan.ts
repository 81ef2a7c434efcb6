// From the serving command's flags to a plan. The flag table (cli-options.ts) has already checked types, bounds and
// the relations between flags; what is checked here depends on a value (`--source history`, a URL's scheme, a
// policy file's fields). A problem is one line naming the flag; no value a person typed is echoed (a flag's value
// may be a token-like secret, a URL with a password, or megabytes of text).
import { resolve } from 'node:path'
import { readFlags } from '@tollgate/cli'
import { BudgetConfigError, type BudgetPolicy, budgetPolicy, DEFAULT_COMMAND_TIMEOUT_MS } from '@tollgate/gate'
import type { SourceConfig } from '../rates/index.js'
import { ECB_EXR_BASE } from '../rates/sources/live.js'
import { DEFAULT_CACHE_MAX_AGE_DAYS, DEFAULT_CACHE_MAX_MIB, defaultCacheLocation } from './cache-folder.js'
import { type ClockName, DEFAULT_OPEN_BUDGET, SERVE_FLAGS, type ServeFlags } from './cli-options.js'
import { DEFAULT_ADVERTISED_SCOPES, RESOURCE } from './constants.js'
import { type BudgetRedisTarget, budgetPrefix, budgetRedisTarget, type TokenMode, tokenMode } from './deployment.js'
import { readPolicyFile } from './policy-file.js'

/** A usage problem: one line, naming the flag. */
export interface UsageProblem {
  problem: string
}

/** What the serving command will do, every value checked. */
export interface ServePlan {
  port: number
  host: string
  resource: string
  allowedHosts: string[]
  mode: TokenMode
  /** Scopes named in the metadata and the 401 challenge: empty with the in-process issuer (the seed's challenge). */
  advertisedScopes: string[]
  /** With --jwks-url: least ms between JWKS fetches, and the ms after which held keys are fetched again. */
  jwks: { cooldownMs: number; maxAgeMs: number }
  tokensPath: string | undefined
  tokenLifetimeSeconds: number
  source: SourceConfig
  clock: ClockName
  /** --budget-redis, or --budget-redis-sentinels and --budget-redis-master, or --budget-redis-cluster. */
  redis: BudgetRedisTarget | undefined
  prefix: string
  /** With --jwks-url: the open fair budget's policy (every verified sub a caller); undefined: the seed's budget. */
  policy: BudgetPolicy | undefined
  /** With --budget-redis: the Redis command timeout (ms), and what to do when Redis has lost the budget's state. */
  redisTimeoutMs: number
  /** --budget-redis-replicas: replicas that must acknowledge each charge (WAIT); 0: none. */
  redisReplicas: number
  onLostState: 'reseed' | 'refuse'
  maxInFlight: number
  maxWaiting: number
  /** The admin listener (metrics and health), or undefined: off. */
  admin: { host: string; port: number } | undefined
  shutdownTimeoutMs: number
  shutdownDelayMs: number
  logLevel: string
  /** --tls-cert and --tls-key (absolute paths), or undefined: plain HTTP. */
  tls: { certFile: string; keyFile: string } | undefined
  /** With --source live: the bounds the cache is pruned to. */
  cacheLimits: { maxBytes: number; maxAgeMs: number }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']
const ADDRESS = (flag: string) => `${flag} must be an address to bind, such as 127.0.0.1`

/** The plan for argv (help and --version aside: the caller answers those from `readFlags` itself). */
export function planFromArgv(argv: readonly string[], cwd: string, env: NodeJS.ProcessEnv): ServePlan | UsageProblem {
  const read = readFlags(argv, SERVE_FLAGS)
  if ('values' in read) return servePlan(read.values, cwd, env)
  return 'problem' in read ? read : { problem: 'help and --version are answered before a plan' }
}

/** Checks the values of the serving command. `cwd` resolves relative paths; `env` locates the cache. */
export function servePlan(values: ServeFlags, cwd: string, env: NodeJS.ProcessEnv): ServePlan | UsageProblem {
  const listening = listeningOf(values)
  if ('problem' in listening) return listening
  const mode = tokenMode(values['jwks-url'], values.issuer)
  if (typeof mode === 'string') return { problem: mode }
  const tokensFile = values['tokens-file']
  if (mode.kind === 'in-process' && tokensFile === undefined)
    return { problem: '--tokens-file is required (or --jwks-url and --issuer)' }
  const jwksTuning = jwksOptions(values, mode)
  if ('problem' in jwksTuning) return jwksTuning
  const budget = budgetOf(values, mode, cwd)
  if ('problem' in budget) return budget
  const logLevel = values['log-level']
  if (!LOG_LEVELS.includes(logLevel)) return { problem: `--log-level must be one of ${LOG_LEVELS.join(', ')}` }
  const source = chooseSource(values, cwd, env)
  if ('problem' in source) return source
  const tls = tlsOf(values, cwd)
  if (tls !== undefined && 'problem' in tls) return tls
  return {
    ...listening,
    mode,
    ...jwksTuning,
    tokensPath: tokensFile === undefined ? undefined : resolve(cwd, tokensFile),
    tokenLifetimeSeconds: values['token-lifetime'],
    ...budget,
    maxInFlight: values['max-in-flight'],
    maxWaiting: values['max-waiting'],
    shutdownTimeoutMs: values['shutdown-timeout-ms'],
    shutdownDelayMs: values['shutdown-delay-ms'],
    logLevel,
    source,
    tls,
    cacheLimits: {
      maxBytes: (values['cache-max-mib'] ?? DEFAULT_CACHE_MAX_MIB) * 1_048_576,
      maxAgeMs: (values['cache-max-age-days'] ?? DEFAULT_CACHE_MAX_AGE_DAYS) * 86_400_000,
    },
  }
}

/** Where to listen and for which names: the port and host, the public URL, the extra hosts, the admin port. */
function listeningOf(
  values: ServeFlags,
): Pick<ServePlan, 'port' | 'host' | 'resource' | 'allowedHosts' | 'admin'> | UsageProblem {
  const host = values.host
  if (host === '' || /[\s/]/.test(host)) return { problem: ADDRESS('--host') }
  const resource = publicUrl(values['public-url'])
  if (typeof resource !== 'string') return resource
  const allowedHosts = values['allowed-host'] ?? []
  for (const h of allowedHosts) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:(\d{1,5}|\*))?$/.test(h))
      return { problem: '--allowed-host must be a host name or address, optionally with :PORT' }
  }
  const adminHost = values['admin-host']
  if (adminHost !== undefined && (adminHost === '' || /[\s/]/.test(adminHost)))
    return { problem: ADDRESS('--admin-host') }
  const adminPort = values['admin-port']
  const admin = adminPort === undefined ? undefined : { host: adminHost ?? '127.0.0.1', port: adminPort }
  return { port: values.port, host, resource, allowedHosts, admin }
}

/** --tls-cert and --tls-key (the table has each need the other), as absolute paths. */
function tlsOf(values: ServeFlags, cwd: string): ServePlan['tls'] | UsageProblem {
  const cert = values['tls-cert']
  const key = values['tls-key']
  if (cert === '' || key === '') return { problem: '--tls-cert and --tls-key must name files' }
  return cert === undefined || key === undefined
    ? undefined
    : { certFile: resolve(cwd, cert), keyFile: resolve(cwd, key) }
}

type BudgetPart = Pick<
  ServePlan,
  'clock' | 'redis' | 'prefix' | 'policy' | 'redisTimeoutMs' | 'redisReplicas' | 'onLostState'
>

/** The budget's clock, its Redis (if any) and the Redis tuning, and the open budget's policy. */
function budgetOf(values: ServeFlags, mode: TokenMode, cwd: string): BudgetPart | UsageProblem {
  const clock = values['budget-clock']
  if (clock !== 'frozen' && clock !== 'monotonic' && clock !== 'wall')
    return { problem: '--budget-clock must be wall, monotonic or frozen' }
  const redis = budgetRedisTarget({
    url: values['budget-redis'],
    sentinels: values['budget-redis-sentinels'],
    master: values['budget-redis-master'],
    cluster: values['budget-redis-cluster'],
  })
  if (typeof redis === 'string') return { problem: redis }
  // Any one of the three Redis flags will do, which a table's `needs` (all of) cannot say.
  for (const flag of [
    'budget-prefix',
    'budget-redis-timeout-ms',
    'budget-state-lost',
    'budget-redis-replicas',
  ] as const) {
    if (redis === undefined && values[flag] !== undefined) return { problem: `--${flag} needs --budget-redis` }
  }
  const prefix = budgetPrefix(values['budget-prefix'])
  if (typeof prefix !== 'string') return { problem: prefix.error }
  // On a Cluster the stores add hash tags themselves; a brace in the prefix would change which slot a key is in.
  if (redis?.kind === 'cluster' && /[{}]/.test(prefix))
    return { problem: '--budget-prefix may not hold { or } with --budget-redis-cluster' }
  // Each process's monotonic clock starts at its own zero; replicas sharing state must read one clock.
  if (redis !== undefined && clock === 'monotonic')
    return { problem: '--budget-clock monotonic is per process: with --budget-redis use frozen or wall' }
  const policy = openBudgetPolicy(values, mode, cwd)
  if (policy !== undefined && 'problem' in policy) return policy
  const onLostState = values['budget-state-lost'] ?? 'reseed'
  if (onLostState !== 'reseed' && onLostState !== 'refuse')
    return { problem: '--budget-state-lost must be reseed or refuse' }
  return {
    clock,
    redis,
    prefix,
    policy,
    redisTimeoutMs: values['budget-redis-timeout-ms'] ?? DEFAULT_COMMAND_TIMEOUT_MS,
    redisReplicas: values['budget-redis-replicas'] ?? 0,
    onLostState,
  }
}

/**
 * What only means something with a real issuer (the table has those flags need --jwks-url): the scopes to advertise
 * (default rates:read; `none` for none) and the JWKS refetch timings. With the in-process issuer its challenge stays
 * exactly the seed's, and it has no authorization endpoint a client could ask a scope of.
 */
function jwksOptions(values: ServeFlags, mode: TokenMode): Pick<ServePlan, 'advertisedScopes' | 'jwks'> | UsageProblem {
  if (mode.kind !== 'jwks') return { advertisedScopes: [], jwks: { cooldownMs: 0, maxAgeMs: 0 } }
  const scopes = values['advertise-scope']
  let advertisedScopes = [...DEFAULT_ADVERTISED_SCOPES]
  if (scopes !== undefined) {
    if (scopes.includes('none')) {
      if (scopes.length > 1) return { problem: '--advertise-scope none cannot be combined with a scope' }
      advertisedScopes = []
    } else {
      // RFC 6749 scope-tokens: printable ASCII without space, '"' or '\', so each fits the quoted challenge.
      if (!scopes.every((scope) => /^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/.test(scope)))
        return { problem: '--advertise-scope must be a scope name: printable characters without space, " or \\' }
      advertisedScopes = [...new Set(scopes)]
    }
  }
  return {
    advertisedScopes,
    jwks: { cooldownMs: values['jwks-cooldown'] * 1000, maxAgeMs: values['jwks-max-age'] * 1000 },
  }
}

/**
 * The open budget's policy with --jwks-url: the defaults, then the --budget-policy file's fields, then the flags
 * given (each flag wins over the file). The file is the gate's budgetPolicy format; a problem names the field at
 * fault (a caller's sub only by its place in `callers`, never echoed). With the in-process issuer (the table refuses
 * these flags there) the seed's two-caller budget stays exactly.
 */
function openBudgetPolicy(values: ServeFlags, mode: TokenMode, cwd: string): BudgetPolicy | UsageProblem | undefined {
  if (mode.kind !== 'jwks') return undefined
  const reserve = values['caller-reserve']
  const pool = values['budget-pool']
  const window = values['budget-window']
  const path = values['budget-policy']
  let fromFile: Record<string, unknown> = {}
  if (path !== undefined) {
    const read = readPolicyFile(resolve(cwd, path))
    if (typeof read === 'string') return { problem: `--budget-policy: ${read}` }
    fromFile = read
  }
  const merged = {
    ...DEFAULT_OPEN_BUDGET,
    ...fromFile,
    ...(reserve !== undefined && { reserve }),
    ...(pool !== undefined && { pool }),
    ...(window !== undefined && { windowSeconds: window }),
  }
  try {
    return budgetPolicy(merged)
  } catch (error) {
    if (!(error instanceof BudgetConfigError)) throw error
    // Which of the three said it: a flag's own bounds were checked by the table, so a problem here comes from the
    // file or from the combination (reserve and pool both 0).
    return { problem: `${path !== undefined ? '--budget-policy' : 'the budget policy'}: ${error.message}` }
  }
}

function publicUrl(raw: string | undefined): string | UsageProblem {
  if (raw === undefined) return RESOURCE
  const absolute = { problem: '--public-url must be an absolute http or https URL, such as https://rates.example/mcp' }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return absolute
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return absolute
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '')
    return { problem: '--public-url must carry no user, password, query or fragment' }
  if (url.pathname === '/' || url.pathname.endsWith('/'))
    return { problem: '--public-url must name the MCP endpoint path, such as https://rates.example/mcp' }
  return url.href
}

/** The live cache's default file (see cache-folder.ts for the order), or a problem naming --cache. */
export function defaultCacheFile(env: NodeJS.ProcessEnv): string | UsageProblem {
  const location = defaultCacheLocation(env)
  return 'problem' in location ? location : location.file
}

/** Flags that belong to one source, and the source each needs. */
const SOURCE_OF_FLAG = {
  history: 'history',
  recordings: 'recordings',
  'live-url': 'live',
  cache: 'live',
  'cache-max-mib': 'live',
  'cache-max-age-days': 'live',
} as const

function chooseSource(values: ServeFlags, cwd: string, env: NodeJS.ProcessEnv): SourceConfig | UsageProblem {
  const source = values.source
  if (source !== 'history' && source !== 'recordings' && source !== 'live')
    return { problem: '--source must be live, history or recordings' }
  for (const [flag, owner] of Object.entries(SOURCE_OF_FLAG)) {
    if (values[flag as keyof typeof SOURCE_OF_FLAG] !== undefined && source !== owner)
      return { problem: `--${flag} needs --source ${owner}` }
  }
  switch (source) {
    case 'history':
      return values.history
        ? { kind: 'history', file: resolve(cwd, values.history) }
        : { problem: '--source history needs --history FILE (eurofxref-hist .zip or .csv)' }
    case 'recordings':
      return values.recordings
        ? { kind: 'recordings', dir: resolve(cwd, values.recordings) }
        : { problem: '--source recordings needs --recordings DIR (holding index.json)' }
    case 'live': {
      const base = values['live-url'] ?? ECB_EXR_BASE
      if (!/^https?:\/\/[^/]/.test(base)) return { problem: '--live-url must be an http or https URL' }
      const cacheFile = values.cache ? resolve(cwd, values.cache) : defaultCacheFile(env)
      if (typeof cacheFile !== 'string') return cacheFile
      return { kind: 'live', baseUrl: base, cacheFile }
    }
  }
}
