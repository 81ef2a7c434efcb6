// The serving command's flags: one table that drives the parser, `--help` and the README test, and the checks that
// turn argv into a plan. A problem is returned as one line naming the flag; no value a person typed is echoed at
// length (a flag's value may be a token-like secret, a URL with a password, or megabytes of text).
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { BudgetConfigError, type BudgetPolicy, budgetPolicy, DEFAULT_COMMAND_TIMEOUT_MS } from '@tollgate/gate'
import type { SourceConfig } from '../rates/index.js'
import { ECB_EXR_BASE } from '../rates/sources/live.js'
import { DEFAULT_CACHE_MAX_AGE_DAYS, DEFAULT_CACHE_MAX_MIB, defaultCacheLocation } from './cache-folder.js'
import { DEFAULT_ADVERTISED_SCOPES, DEFAULT_PORT, RESOURCE } from './constants.js'
import { type BudgetRedisTarget, budgetPrefix, budgetRedisTarget, type TokenMode, tokenMode } from './deployment.js'
import { readPolicyFile } from './policy-file.js'

/** The budget clocks by name: `wall` refills on the wall clock (the served default), `frozen` never refills. */
export type ClockName = 'wall' | 'monotonic' | 'frozen'

/** Default lifetime of a minted token, seconds (the digest's 15 minutes). */
export const DEFAULT_TOKEN_LIFETIME_SECONDS = 900
/** Longest lifetime `--token-lifetime` accepts: one week. */
export const MAX_TOKEN_LIFETIME_SECONDS = 7 * 86_400
/** Default calls of one caller in service at once (the fair scheduler). */
export const DEFAULT_MAX_IN_FLIGHT = 2
/** Default calls of one caller waiting for a slot; one more is answered 429 with Retry-After. */
export const DEFAULT_MAX_WAITING = 32
/** Default least time between two fetches of a real issuer's JWKS, seconds. */
export const DEFAULT_JWKS_COOLDOWN_SECONDS = 5
/** Default age at which a real issuer's keys are fetched again, seconds: the bound on a removed key. */
export const DEFAULT_JWKS_MAX_AGE_SECONDS = 300
/** Default time SIGTERM/SIGINT lets requests already received finish, ms. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000
/**
 * Default time SIGTERM keeps serving while /readyz answers 503 (about three checks of a balancer probing every
 * 300 ms), ms. SIGINT does not wait.
 */
export const DEFAULT_SHUTDOWN_DELAY_MS = 1_000
/** Longest `--shutdown-timeout-ms` and `--shutdown-delay-ms`: ten minutes. */
export const MAX_SHUTDOWN_TIMEOUT_MS = 600_000
/**
 * The open budget's defaults with --jwks-url, sized for a small team: each caller holds 60 calls a minute no one else
 * can spend (one a second, sustained), and all share 240 more a minute, so one busy caller gets at most 300 a minute
 * while each other still gets its own 60.
 */
export const DEFAULT_OPEN_BUDGET = { reserve: 60, pool: 240, windowSeconds: 60 } as const

interface FlagSpec {
  type: 'string' | 'boolean'
  multiple?: boolean
  short?: string
  value?: string
  /** What `--help` shows as the default. */
  shown?: string
  help: string
}

/** Every flag of `quenchz` (serving), in the order `--help` lists them. */
export const SERVE_FLAGS: Record<string, FlagSpec> = {
  port: { type: 'string', value: 'N', shown: String(DEFAULT_PORT), help: 'port to listen on; 0 picks a free one' },
  host: { type: 'string', value: 'ADDR', shown: '127.0.0.1', help: 'address to bind' },
  'public-url': {
    type: 'string',
    value: 'URL',
    shown: RESOURCE,
    help: 'this server as its callers reach it: the resource id tokens must name (aud), the metadata, an allowed Host',
  },
  'allowed-host': {
    type: 'string',
    multiple: true,
    value: 'HOST',
    shown: 'loopback names on a loopback bind',
    help: 'another Host header to answer for (repeatable); HOST or HOST:PORT',
  },
  'tls-cert': {
    type: 'string',
    value: 'FILE',
    help: 'serve HTTPS with this PEM certificate (a chain allowed), with --tls-key; both re-read on SIGHUP',
  },
  'tls-key': { type: 'string', value: 'FILE', help: 'the PEM private key of --tls-cert' },
  'tokens-file': {
    type: 'string',
    value: 'PATH',
    help: 'write bearer tokens here (outside any checkout; the signing key is kept beside it, 0600)',
  },
  'token-lifetime': {
    type: 'string',
    value: 'SECONDS',
    shown: String(DEFAULT_TOKEN_LIFETIME_SECONDS),
    help: `lifetime of minted tokens, 1 to ${MAX_TOKEN_LIFETIME_SECONDS}; renew with \`quenchz tokens\``,
  },
  'jwks-url': { type: 'string', value: 'URL', help: 'verify tokens against this JWKS instead (with --issuer)' },
  issuer: { type: 'string', value: 'ISS', help: 'the `iss` tokens from --jwks-url must carry' },
  'advertise-scope': {
    type: 'string',
    multiple: true,
    value: 'SCOPE',
    shown: DEFAULT_ADVERTISED_SCOPES.join(' '),
    help: 'with --jwks-url: a scope clients should ask for, in the metadata and the 401 challenge (repeatable; none: no scope)',
  },
  'jwks-cooldown': {
    type: 'string',
    value: 'SECONDS',
    shown: String(DEFAULT_JWKS_COOLDOWN_SECONDS),
    help: 'with --jwks-url: least time between two JWKS fetches; a token with an unknown key is refused inside it',
  },
  'jwks-max-age': {
    type: 'string',
    value: 'SECONDS',
    shown: String(DEFAULT_JWKS_MAX_AGE_SECONDS),
    help: 'with --jwks-url: keys are refetched once this old, so a removed key is refused within it',
  },
  source: { type: 'string', value: 'NAME', shown: 'live', help: 'live, history or recordings' },
  history: { type: 'string', value: 'FILE', help: 'with --source history: eurofxref-hist.zip or .csv' },
  recordings: { type: 'string', value: 'DIR', help: 'with --source recordings: a directory holding index.json' },
  'live-url': { type: 'string', value: 'URL', shown: ECB_EXR_BASE, help: 'with --source live: the EXR API base' },
  cache: {
    type: 'string',
    value: 'FILE',
    shown: '$CACHE_DIRECTORY, $XDG_CACHE_HOME/quenchz, ~/.cache/quenchz or $TMPDIR/quenchz-cache-UID: ecb-live.sqlite',
    help: 'with --source live: the SQLite answer cache',
  },
  'cache-max-mib': {
    type: 'string',
    value: 'N',
    shown: String(DEFAULT_CACHE_MAX_MIB),
    help: 'with --source live: cached answers beyond this many MiB are pruned, oldest first (at start, then hourly)',
  },
  'cache-max-age-days': {
    type: 'string',
    value: 'DAYS',
    shown: String(DEFAULT_CACHE_MAX_AGE_DAYS),
    help: 'with --source live: cached answers fetched longer ago are pruned (fetched again when asked for)',
  },
  'budget-clock': {
    type: 'string',
    value: 'NAME',
    shown: 'wall',
    help: 'wall (refills), monotonic, or frozen (never refills: the proofs)',
  },
  'budget-policy': {
    type: 'string',
    value: 'FILE',
    help: 'with --jwks-url: the budget policy, JSON {reserve, pool, windowSeconds, unlistedCallers, callers}; flags below override it',
  },
  'caller-reserve': {
    type: 'string',
    value: 'N',
    shown: String(DEFAULT_OPEN_BUDGET.reserve),
    help: 'with --jwks-url: calls per window each caller (token sub) holds for itself; no other caller can spend them',
  },
  'budget-pool': {
    type: 'string',
    value: 'N',
    shown: String(DEFAULT_OPEN_BUDGET.pool),
    help: 'with --jwks-url: calls per window shared by all callers, spent once a caller’s own reserve is empty',
  },
  'budget-window': {
    type: 'string',
    value: 'SECONDS',
    shown: String(DEFAULT_OPEN_BUDGET.windowSeconds),
    help: 'with --jwks-url: seconds in which an empty reserve, and the empty pool, refill completely',
  },
  'budget-redis': { type: 'string', value: 'URL', help: 'keep the budget in Redis, shared by replicas' },
  'budget-redis-sentinels': {
    type: 'string',
    value: 'HOST:PORT,…',
    help: 'instead of --budget-redis: the sentinels watching the budget Redis (with --budget-redis-master); a failover promotes a replica and quenchz follows',
  },
  'budget-redis-master': {
    type: 'string',
    value: 'NAME',
    help: 'with --budget-redis-sentinels: the name of the master set the sentinels watch',
  },
  'budget-redis-cluster': {
    type: 'string',
    value: 'HOST:PORT,…',
    help: 'instead of --budget-redis: some nodes of a Redis Cluster holding the budget (the rest are discovered)',
  },
  'budget-redis-replicas': {
    type: 'string',
    value: 'N',
    shown: '0',
    help: 'with a budget Redis: replicas that must hold each charge before its call is served (Redis WAIT), so a failover loses none; 0: asynchronous',
  },
  'budget-prefix': { type: 'string', value: 'PREFIX', shown: 'quenchz:budget:', help: 'key prefix in Redis' },
  'budget-redis-timeout-ms': {
    type: 'string',
    value: 'MS',
    shown: String(DEFAULT_COMMAND_TIMEOUT_MS),
    help: 'with --budget-redis: the longest a call waits for Redis; then it is answered 503 and never charged',
  },
  'budget-state-lost': {
    type: 'string',
    value: 'ACTION',
    shown: 'reseed',
    help: 'with --budget-redis: when Redis comes back without the budget (restarted empty): reseed (every caller starts full) or refuse (503 until acknowledged)',
  },
  'max-in-flight': {
    type: 'string',
    value: 'N',
    shown: String(DEFAULT_MAX_IN_FLIGHT),
    help: "one caller's calls served at once; more wait their turn",
  },
  'max-waiting': {
    type: 'string',
    value: 'N',
    shown: String(DEFAULT_MAX_WAITING),
    help: "one caller's calls waiting their turn; more are answered 429 with Retry-After",
  },
  'admin-port': {
    type: 'string',
    value: 'N',
    shown: 'off',
    help: 'serve /metrics (Prometheus), /livez and /readyz on this port of their own; 0 picks a free one',
  },
  'admin-host': {
    type: 'string',
    value: 'ADDR',
    shown: '127.0.0.1',
    help: 'with --admin-port: the address the admin port binds',
  },
  'shutdown-delay-ms': {
    type: 'string',
    value: 'MS',
    shown: String(DEFAULT_SHUTDOWN_DELAY_MS),
    help: 'on SIGTERM, how long to go on serving while /readyz answers 503, so a load balancer takes this replica out first (SIGINT does not wait)',
  },
  'shutdown-timeout-ms': {
    type: 'string',
    value: 'MS',
    shown: String(DEFAULT_SHUTDOWN_TIMEOUT_MS),
    help: 'then, how long requests already received may finish before their connections are closed',
  },
  'log-level': {
    type: 'string',
    value: 'LEVEL',
    shown: 'info',
    help: 'fatal, error, warn, info, debug, trace or silent (logs go to stderr)',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
  version: { type: 'boolean', help: 'print the version and exit' },
}

/** Flags of `quenchz tokens`. */
export const TOKENS_FLAGS: Record<string, FlagSpec> = {
  'tokens-file': { type: 'string', value: 'PATH', help: 'the tokens file a running quenchz wrote' },
  'token-lifetime': {
    type: 'string',
    value: 'SECONDS',
    shown: 'the running server’s',
    help: 'lifetime of the new tokens',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
}

/** `--help` text built from a flag table. */
export function helpText(head: string, flags: Record<string, FlagSpec>, tail = ''): string {
  const rows = Object.entries(flags).map(([name, spec]) => {
    const left = `${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.value ? ` ${spec.value}` : ''}`
    const shown = spec.shown ? ` (default: ${spec.shown})` : ''
    return `  ${left.padEnd(30)} ${spec.help}${shown}`
  })
  return `${head}\n\noptions:\n${rows.join('\n')}\n${tail}`
}

/** A usage problem: one line, naming the flag. */
export interface UsageProblem {
  problem: string
}

export type Parsed<T> = { help: true } | { version: true } | UsageProblem | { values: T }

type Values = Record<string, string | boolean | string[] | undefined>

/** Parses argv against a flag table; unknown flags, missing values and positionals become one-line problems. */
export function parseFlags(argv: readonly string[], flags: Record<string, FlagSpec>): Parsed<Values> {
  const options = Object.fromEntries(
    Object.entries(flags).map(([name, spec]) => [
      name,
      { type: spec.type, ...(spec.multiple ? { multiple: true } : {}), ...(spec.short ? { short: spec.short } : {}) },
    ]),
  )
  let values: Values
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as Values
  } catch (error) {
    return { problem: parseProblem(error as Error & { code?: string }) }
  }
  if (values.help === true) return { help: true }
  if (values.version === true) return { version: true }
  return { values }
}

function parseProblem(error: Error & { code?: string }): string {
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /'([^']*)'/.exec(error.message)?.[1] ?? 'an option'
    return `unknown option ${shortened(flag)}`
  }
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /'(--?[\w-]+)/.exec(error.message)?.[1]
    return flag ? `${flag} needs a value` : 'an option is missing its value'
  }
  if (error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const stray = /'([^']*)'/.exec(error.message)?.[1] ?? ''
    return `unexpected argument ${shortened(stray)}: every value follows its flag`
  }
  return error.message.split('\n')[0] as string
}

/** At most a short prefix of something a person typed. */
export function shortened(text: string, max = 40): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`
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

/** Checks the values of the serving command. `cwd` resolves relative paths; `env` locates the cache. */
export function servePlan(values: Values, cwd: string, env: NodeJS.ProcessEnv): ServePlan | UsageProblem {
  const str = (name: string) => values[name] as string | undefined
  const port = integerFlag(values, 'port', DEFAULT_PORT, 0, 65535)
  if (typeof port !== 'number') return port
  const host = str('host') ?? '127.0.0.1'
  if (host === '' || /[\s/]/.test(host)) return { problem: '--host must be an address to bind, such as 127.0.0.1' }
  const resource = publicUrl(str('public-url'))
  if (typeof resource !== 'string') return resource
  const allowedHosts = (values['allowed-host'] as string[] | undefined) ?? []
  for (const h of allowedHosts) {
    if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:(\d{1,5}|\*))?$/.test(h))
      return { problem: '--allowed-host must be a host name or address, optionally with :PORT' }
  }
  const mode = tokenMode(str('jwks-url'), str('issuer'))
  if (typeof mode === 'string') return { problem: mode }
  const tokensFile = str('tokens-file')
  // Refused rather than ignored: a runner waiting for a tokens file that never comes would hang.
  if (mode.kind === 'jwks' && tokensFile !== undefined)
    return { problem: '--tokens-file is not used with --jwks-url: tokens come from that issuer and none are minted' }
  if (mode.kind === 'in-process' && tokensFile === undefined)
    return { problem: '--tokens-file is required (or --jwks-url and --issuer)' }
  const lifetime = integerFlag(values, 'token-lifetime', DEFAULT_TOKEN_LIFETIME_SECONDS, 1, MAX_TOKEN_LIFETIME_SECONDS)
  if (typeof lifetime !== 'number') return lifetime
  if (mode.kind === 'jwks' && str('token-lifetime') !== undefined)
    return { problem: '--token-lifetime is not used with --jwks-url: that issuer decides lifetimes' }
  const jwksTuning = jwksOptions(values, mode)
  if ('problem' in jwksTuning) return jwksTuning
  const clock = str('budget-clock') ?? 'wall'
  if (clock !== 'frozen' && clock !== 'monotonic' && clock !== 'wall')
    return { problem: '--budget-clock must be wall, monotonic or frozen' }
  const redis = budgetRedisTarget({
    url: str('budget-redis'),
    sentinels: str('budget-redis-sentinels'),
    master: str('budget-redis-master'),
    cluster: str('budget-redis-cluster'),
  })
  if (typeof redis === 'string') return { problem: redis }
  if (redis === undefined && str('budget-prefix') !== undefined)
    return { problem: '--budget-prefix needs --budget-redis' }
  const prefix = budgetPrefix(str('budget-prefix'))
  if (typeof prefix !== 'string') return { problem: prefix.error }
  // On a Cluster the stores add hash tags themselves; a brace in the prefix would change which slot a key is in.
  if (redis?.kind === 'cluster' && /[{}]/.test(prefix))
    return { problem: '--budget-prefix may not hold { or } with --budget-redis-cluster' }
  // Each process's monotonic clock starts at its own zero; replicas sharing state must read one clock.
  if (redis !== undefined && clock === 'monotonic')
    return { problem: '--budget-clock monotonic is per process: with --budget-redis use frozen or wall' }
  const policy = openBudgetPolicy(values, mode, cwd)
  if (policy !== undefined && 'problem' in policy) return policy
  for (const flag of ['budget-redis-timeout-ms', 'budget-state-lost', 'budget-redis-replicas']) {
    if (redis === undefined && values[flag] !== undefined) return { problem: `--${flag} needs --budget-redis` }
  }
  const redisTimeoutMs = integerFlag(values, 'budget-redis-timeout-ms', DEFAULT_COMMAND_TIMEOUT_MS, 10, 60_000)
  if (typeof redisTimeoutMs !== 'number') return redisTimeoutMs
  const redisReplicas = integerFlag(values, 'budget-redis-replicas', 0, 0, 16)
  if (typeof redisReplicas !== 'number') return redisReplicas
  const onLostState = str('budget-state-lost') ?? 'reseed'
  if (onLostState !== 'reseed' && onLostState !== 'refuse')
    return { problem: '--budget-state-lost must be reseed or refuse' }
  const maxInFlight = integerFlag(values, 'max-in-flight', DEFAULT_MAX_IN_FLIGHT, 1, 1024)
  if (typeof maxInFlight !== 'number') return maxInFlight
  const maxWaiting = integerFlag(values, 'max-waiting', DEFAULT_MAX_WAITING, 1, 65_536)
  if (typeof maxWaiting !== 'number') return maxWaiting
  const adminPort = optionalInteger(values, 'admin-port', 0, 65535)
  if (typeof adminPort === 'object') return adminPort
  const adminHost = str('admin-host')
  if (adminHost !== undefined && adminPort === undefined) return { problem: '--admin-host needs --admin-port' }
  if (adminHost !== undefined && (adminHost === '' || /[\s/]/.test(adminHost)))
    return { problem: '--admin-host must be an address to bind, such as 127.0.0.1' }
  const shutdownTimeoutMs = integerFlag(
    values,
    'shutdown-timeout-ms',
    DEFAULT_SHUTDOWN_TIMEOUT_MS,
    0,
    MAX_SHUTDOWN_TIMEOUT_MS,
  )
  if (typeof shutdownTimeoutMs !== 'number') return shutdownTimeoutMs
  const shutdownDelayMs = integerFlag(
    values,
    'shutdown-delay-ms',
    DEFAULT_SHUTDOWN_DELAY_MS,
    0,
    MAX_SHUTDOWN_TIMEOUT_MS,
  )
  if (typeof shutdownDelayMs !== 'number') return shutdownDelayMs
  const logLevel = str('log-level') ?? 'info'
  if (!LOG_LEVELS.includes(logLevel)) return { problem: `--log-level must be one of ${LOG_LEVELS.join(', ')}` }
  const source = chooseSource(values, cwd, env)
  if ('problem' in source) return source
  const served = tlsAndCache(values, cwd, source)
  if ('problem' in served) return served
  return {
    port,
    host,
    resource,
    allowedHosts,
    mode,
    advertisedScopes: jwksTuning.advertisedScopes,
    jwks: { cooldownMs: jwksTuning.cooldownMs, maxAgeMs: jwksTuning.maxAgeMs },
    tokensPath: tokensFile === undefined ? undefined : resolve(cwd, tokensFile),
    tokenLifetimeSeconds: lifetime,
    source,
    clock,
    redis,
    prefix,
    policy,
    redisTimeoutMs,
    redisReplicas,
    onLostState,
    maxInFlight,
    maxWaiting,
    admin: adminPort === undefined ? undefined : { host: adminHost ?? '127.0.0.1', port: adminPort },
    shutdownTimeoutMs,
    shutdownDelayMs,
    logLevel,
    ...served,
  }
}

/** --tls-cert and --tls-key (both or neither), and the cache's bounds (only with --source live). */
function tlsAndCache(
  values: Values,
  cwd: string,
  source: SourceConfig,
): Pick<ServePlan, 'tls' | 'cacheLimits'> | UsageProblem {
  const cert = values['tls-cert'] as string | undefined
  const key = values['tls-key'] as string | undefined
  if ((cert === undefined) !== (key === undefined))
    return { problem: '--tls-cert and --tls-key go together: pass both or neither' }
  if (cert === '' || key === '') return { problem: '--tls-cert and --tls-key must name files' }
  for (const flag of ['cache-max-mib', 'cache-max-age-days']) {
    if (values[flag] !== undefined && source.kind !== 'live') return { problem: `--${flag} needs --source live` }
  }
  const mib = integerFlag(values, 'cache-max-mib', DEFAULT_CACHE_MAX_MIB, 1, 1_048_576)
  if (typeof mib !== 'number') return mib
  const days = integerFlag(values, 'cache-max-age-days', DEFAULT_CACHE_MAX_AGE_DAYS, 1, 3650)
  if (typeof days !== 'number') return days
  return {
    tls:
      cert === undefined || key === undefined
        ? undefined
        : { certFile: resolve(cwd, cert), keyFile: resolve(cwd, key) },
    cacheLimits: { maxBytes: mib * 1_048_576, maxAgeMs: days * 86_400_000 },
  }
}

/**
 * The flags that only mean something with a real issuer: the scopes to advertise (default rates:read; `none` for
 * none) and the JWKS refetch timings. With the in-process issuer they are refused rather than ignored: its challenge
 * stays exactly the seed's, and it has no authorization endpoint a client could ask a scope of.
 */
function jwksOptions(
  values: Values,
  mode: TokenMode,
): { advertisedScopes: string[]; cooldownMs: number; maxAgeMs: number } | UsageProblem {
  const scopes = values['advertise-scope'] as string[] | undefined
  if (mode.kind !== 'jwks') {
    for (const flag of ['advertise-scope', 'jwks-cooldown', 'jwks-max-age']) {
      if (values[flag] !== undefined) return { problem: `--${flag} needs --jwks-url` }
    }
    return { advertisedScopes: [], cooldownMs: 0, maxAgeMs: 0 }
  }
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
  const cooldown = integerFlag(values, 'jwks-cooldown', DEFAULT_JWKS_COOLDOWN_SECONDS, 0, 3600)
  if (typeof cooldown !== 'number') return cooldown
  const maxAge = integerFlag(values, 'jwks-max-age', DEFAULT_JWKS_MAX_AGE_SECONDS, 1, 86_400)
  if (typeof maxAge !== 'number') return maxAge
  return { advertisedScopes, cooldownMs: cooldown * 1000, maxAgeMs: maxAge * 1000 }
}

const POLICY_FLAGS = ['budget-policy', 'caller-reserve', 'budget-pool', 'budget-window'] as const

/**
 * The open budget's policy with --jwks-url: the defaults, then the --budget-policy file's fields, then the flags
 * given (each flag wins over the file). The file is the gate's budgetPolicy format; a problem names the field at
 * fault (a caller's sub only by its place in `callers`, never echoed). With the in-process issuer the flags are
 * refused: that mode keeps the seed's two-caller budget exactly.
 */
function openBudgetPolicy(values: Values, mode: TokenMode, cwd: string): BudgetPolicy | UsageProblem | undefined {
  if (mode.kind !== 'jwks') {
    for (const flag of POLICY_FLAGS) if (values[flag] !== undefined) return { problem: `--${flag} needs --jwks-url` }
    return undefined
  }
  const max = 1_000_000_000
  const reserve = optionalInteger(values, 'caller-reserve', 0, max)
  if (typeof reserve === 'object') return reserve
  const pool = optionalInteger(values, 'budget-pool', 0, max)
  if (typeof pool === 'object') return pool
  const window = optionalInteger(values, 'budget-window', 1, 86_400)
  if (typeof window === 'object') return window
  const path = values['budget-policy'] as string | undefined
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
    // Which of the three said it: a flag's own bounds were checked above, so a problem here comes from the file or
    // from the combination (reserve and pool both 0).
    return { problem: `${path !== undefined ? '--budget-policy' : 'the budget policy'}: ${error.message}` }
  }
}

/** integerFlag, undefined when the flag is absent. */
function optionalInteger(values: Values, name: string, min: number, max: number): number | UsageProblem | undefined {
  return values[name] === undefined ? undefined : integerFlag(values, name, 0, min, max)
}

/** An integer flag within bounds, `fallback` when absent; the problem names the flag and the range, never the value. */
export function integerFlag(
  values: Values,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number | UsageProblem {
  const raw = values[name] as string | undefined
  if (raw === undefined) return fallback
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(n) || n < min || n > max)
    return { problem: `--${name} must be an integer from ${min} to ${max}` }
  return n
}

function publicUrl(raw: string | undefined): string | UsageProblem {
  if (raw === undefined) return RESOURCE
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { problem: '--public-url must be an absolute http or https URL, such as https://rates.example/mcp' }
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { problem: '--public-url must be an absolute http or https URL, such as https://rates.example/mcp' }
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

function chooseSource(values: Values, cwd: string, env: NodeJS.ProcessEnv): SourceConfig | UsageProblem {
  const str = (name: string) => values[name] as string | undefined
  const source = str('source') ?? 'live'
  const stray = (flag: string, owner: string) =>
    str(flag) !== undefined && source !== owner ? { problem: `--${flag} needs --source ${owner}` } : undefined
  const misplaced =
    stray('history', 'history') ??
    stray('recordings', 'recordings') ??
    stray('live-url', 'live') ??
    stray('cache', 'live')
  if (misplaced !== undefined && ['history', 'recordings', 'live'].includes(source)) return misplaced
  switch (source) {
    case 'history':
      return str('history')
        ? { kind: 'history', file: resolve(cwd, str('history') as string) }
        : { problem: '--source history needs --history FILE (eurofxref-hist .zip or .csv)' }
    case 'recordings':
      return str('recordings')
        ? { kind: 'recordings', dir: resolve(cwd, str('recordings') as string) }
        : { problem: '--source recordings needs --recordings DIR (holding index.json)' }
    case 'live': {
      const base = str('live-url') ?? ECB_EXR_BASE
      if (!/^https?:\/\/[^/]/.test(base)) return { problem: '--live-url must be an http or https URL' }
      const cacheFile = str('cache') ? resolve(cwd, str('cache') as string) : defaultCacheFile(env)
      if (typeof cacheFile !== 'string') return cacheFile
      return { kind: 'live', baseUrl: base, cacheFile }
    }
    default:
      return { problem: '--source must be live, history or recordings' }
  }
}
