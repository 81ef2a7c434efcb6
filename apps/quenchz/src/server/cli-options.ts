// The flags of `quenchz` and `quenchz tokens`: one table each (@tollgate/cli) that declares every flag once — its
// type, default, bounds, what it needs and what it excludes — and drives the parser, the relation checks, `--help`
// and the README tests. Checks that depend on a flag's value (`--source history`, a URL's scheme) are serve-plan.ts's.
import type { FlagTable, FlagValues } from '@tollgate/cli'
import { DEFAULT_COMMAND_TIMEOUT_MS } from '@tollgate/gate'
import { ECB_EXR_BASE } from '../rates/sources/live.js'
import { DEFAULT_CACHE_MAX_AGE_DAYS, DEFAULT_CACHE_MAX_MIB } from './cache-folder.js'
import { DEFAULT_ADVERTISED_SCOPES, DEFAULT_PORT, RESOURCE } from './constants.js'

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

/** Most calls a budget's reserve or pool may hold per window. */
const MAX_BUDGET_CALLS = 1_000_000_000

/** Every flag of `quenchz` (serving), in the order `--help` lists them. */
export const SERVE_FLAGS = {
  port: {
    type: 'integer',
    value: 'N',
    min: 0,
    max: 65_535,
    default: DEFAULT_PORT,
    help: 'port to listen on; 0 picks a free one',
  },
  host: { type: 'string', value: 'ADDR', default: '127.0.0.1', help: 'address to bind' },
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
    needs: ['tls-key'],
    help: 'serve HTTPS with this PEM certificate (a chain allowed), with --tls-key; both re-read on SIGHUP',
  },
  'tls-key': { type: 'string', value: 'FILE', needs: ['tls-cert'], help: 'the PEM private key of --tls-cert' },
  'tokens-file': {
    type: 'string',
    value: 'PATH',
    // Refused rather than ignored: a runner waiting for a tokens file that never comes would hang.
    conflicts: ['jwks-url'],
    help: 'write bearer tokens here (outside any checkout; the signing key is kept beside it, 0600)',
  },
  'token-lifetime': {
    type: 'integer',
    value: 'SECONDS',
    min: 1,
    max: MAX_TOKEN_LIFETIME_SECONDS,
    default: DEFAULT_TOKEN_LIFETIME_SECONDS,
    // A real issuer decides its tokens' lifetimes.
    conflicts: ['jwks-url'],
    help: 'lifetime of minted tokens; renew with `quenchz tokens`',
  },
  'jwks-url': {
    type: 'string',
    value: 'URL',
    needs: ['issuer'],
    help: 'verify tokens against this JWKS instead',
  },
  issuer: { type: 'string', value: 'ISS', needs: ['jwks-url'], help: 'the `iss` tokens from --jwks-url must carry' },
  'advertise-scope': {
    type: 'string',
    multiple: true,
    value: 'SCOPE',
    shown: DEFAULT_ADVERTISED_SCOPES.join(' '),
    needs: ['jwks-url'],
    help: 'with --jwks-url: a scope clients should ask for, in the metadata and the 401 challenge (repeatable; none: no scope)',
  },
  'jwks-cooldown': {
    type: 'integer',
    value: 'SECONDS',
    min: 0,
    max: 3600,
    default: DEFAULT_JWKS_COOLDOWN_SECONDS,
    needs: ['jwks-url'],
    help: 'with --jwks-url: least time between two JWKS fetches; a token with an unknown key is refused inside it',
  },
  'jwks-max-age': {
    type: 'integer',
    value: 'SECONDS',
    min: 1,
    max: 86_400,
    default: DEFAULT_JWKS_MAX_AGE_SECONDS,
    needs: ['jwks-url'],
    help: 'with --jwks-url: keys are refetched once this old, so a removed key is refused within it',
  },
  source: { type: 'string', value: 'NAME', default: 'live', help: 'live, history or recordings' },
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
    type: 'integer',
    value: 'N',
    min: 1,
    max: 1_048_576,
    shown: String(DEFAULT_CACHE_MAX_MIB),
    help: 'with --source live: cached answers beyond this many MiB are pruned, oldest first (at start, then hourly)',
  },
  'cache-max-age-days': {
    type: 'integer',
    value: 'DAYS',
    min: 1,
    max: 3650,
    shown: String(DEFAULT_CACHE_MAX_AGE_DAYS),
    help: 'with --source live: cached answers fetched longer ago are pruned (fetched again when asked for)',
  },
  'budget-clock': {
    type: 'string',
    value: 'NAME',
    default: 'wall',
    help: 'wall (refills), monotonic, or frozen (never refills: the proofs)',
  },
  'budget-policy': {
    type: 'string',
    value: 'FILE',
    needs: ['jwks-url'],
    help: 'with --jwks-url: the budget policy, JSON {reserve, pool, windowSeconds, unlistedCallers, callers}; flags below override it',
  },
  // No `default`: absent, the policy file's value (or the open budget's default, shown) applies.
  'caller-reserve': {
    type: 'integer',
    value: 'N',
    max: MAX_BUDGET_CALLS,
    shown: String(DEFAULT_OPEN_BUDGET.reserve),
    needs: ['jwks-url'],
    help: 'with --jwks-url: calls per window each caller (token sub) holds for itself; no other caller can spend them',
  },
  'budget-pool': {
    type: 'integer',
    value: 'N',
    max: MAX_BUDGET_CALLS,
    shown: String(DEFAULT_OPEN_BUDGET.pool),
    needs: ['jwks-url'],
    help: 'with --jwks-url: calls per window shared by all callers, spent once a caller’s own reserve is empty',
  },
  'budget-window': {
    type: 'integer',
    value: 'SECONDS',
    min: 1,
    max: 86_400,
    shown: String(DEFAULT_OPEN_BUDGET.windowSeconds),
    needs: ['jwks-url'],
    help: 'with --jwks-url: seconds in which an empty reserve, and the empty pool, refill completely',
  },
  'budget-redis': {
    type: 'string',
    value: 'URL',
    conflicts: ['budget-redis-sentinels', 'budget-redis-cluster'],
    help: 'keep the budget in Redis, shared by replicas',
  },
  'budget-redis-sentinels': {
    type: 'string',
    value: 'HOST:PORT,…',
    needs: ['budget-redis-master'],
    conflicts: ['budget-redis-cluster'],
    help: 'instead of --budget-redis: the sentinels watching the budget Redis (with --budget-redis-master); a failover promotes a replica and quenchz follows',
  },
  'budget-redis-master': {
    type: 'string',
    value: 'NAME',
    needs: ['budget-redis-sentinels'],
    help: 'with --budget-redis-sentinels: the name of the master set the sentinels watch',
  },
  'budget-redis-cluster': {
    type: 'string',
    value: 'HOST:PORT,…',
    help: 'instead of --budget-redis: some nodes of a Redis Cluster holding the budget (the rest are discovered)',
  },
  // The four below need one of the three Redis flags, and the cache's bounds need `--source live`: serve-plan.ts checks
  // those (a table's `needs` means all of), so their defaults are applied there and only shown here.
  'budget-redis-replicas': {
    type: 'integer',
    value: 'N',
    min: 0,
    max: 16,
    shown: '0',
    help: 'with a budget Redis: replicas that must hold each charge before its call is served (Redis WAIT), so a failover loses none; 0: asynchronous',
  },
  'budget-prefix': { type: 'string', value: 'PREFIX', shown: 'quenchz:budget:', help: 'key prefix in Redis' },
  'budget-redis-timeout-ms': {
    type: 'integer',
    value: 'MS',
    min: 10,
    max: 60_000,
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
    type: 'integer',
    value: 'N',
    min: 1,
    max: 1024,
    default: DEFAULT_MAX_IN_FLIGHT,
    help: "one caller's calls served at once; more wait their turn",
  },
  'max-waiting': {
    type: 'integer',
    value: 'N',
    min: 1,
    max: 65_536,
    default: DEFAULT_MAX_WAITING,
    help: "one caller's calls waiting their turn; more are answered 429 with Retry-After",
  },
  'admin-port': {
    type: 'integer',
    value: 'N',
    min: 0,
    max: 65_535,
    shown: 'off',
    help: 'serve /metrics (Prometheus), /livez and /readyz on this port of their own; 0 picks a free one',
  },
  'admin-host': {
    type: 'string',
    value: 'ADDR',
    shown: '127.0.0.1',
    needs: ['admin-port'],
    help: 'with --admin-port: the address the admin port binds',
  },
  'shutdown-delay-ms': {
    type: 'integer',
    value: 'MS',
    min: 0,
    max: MAX_SHUTDOWN_TIMEOUT_MS,
    default: DEFAULT_SHUTDOWN_DELAY_MS,
    help: 'on SIGTERM, how long to go on serving while /readyz answers 503, so a load balancer takes this replica out first (SIGINT does not wait)',
  },
  'shutdown-timeout-ms': {
    type: 'integer',
    value: 'MS',
    min: 0,
    max: MAX_SHUTDOWN_TIMEOUT_MS,
    default: DEFAULT_SHUTDOWN_TIMEOUT_MS,
    help: 'then, how long requests already received may finish before their connections are closed',
  },
  'log-level': {
    type: 'string',
    value: 'LEVEL',
    default: 'info',
    help: 'fatal, error, warn, info, debug, trace or silent (logs go to stderr)',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
  version: { type: 'boolean', help: 'print the version and exit' },
} as const satisfies FlagTable

/** The values of the serving command's flags, as `readFlags` returns them. */
export type ServeFlags = FlagValues<typeof SERVE_FLAGS>

/** Flags of `quenchz tokens`. */
export const TOKENS_FLAGS = {
  'tokens-file': { type: 'string', value: 'PATH', help: 'the tokens file a running quenchz wrote' },
  'token-lifetime': {
    type: 'integer',
    value: 'SECONDS',
    min: 1,
    max: MAX_TOKEN_LIFETIME_SECONDS,
    shown: 'the running server’s',
    help: 'lifetime of the new tokens',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
} as const satisfies FlagTable
