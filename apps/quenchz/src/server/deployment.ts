// Deployment options of the CLI: a real issuer by JWKS URL, and a fair budget shared through Redis.
// Every message here names a location without its credentials: a URL's user, password and query never appear.
import {
  type BudgetStoreEvent,
  budgetClusterOptions,
  budgetRedisOptions,
  DEFAULT_COMMAND_TIMEOUT_MS,
  RedisBudgetStore,
  RedisSessionStore,
} from '@tollgate/gate'
import { Cluster, Redis } from 'ioredis'

/** Where bearer tokens come from: the in-process issuer (mints the manifest) or a real issuer's JWKS. */
export type TokenMode = { kind: 'in-process' } | { kind: 'jwks'; jwksUrl: URL; issuer: string }

/** The default key prefix of the shared budget. */
export const DEFAULT_BUDGET_PREFIX = 'quenchz:budget:'

/** A URL shown without user, password, query or fragment. */
export function shownUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`
}

/**
 * Parses `--jwks-url` and `--issuer` (the flag table has them need each other). Returns the mode, or a one-line usage
 * error.
 */
export function tokenMode(jwksUrl: string | undefined, issuer: string | undefined): TokenMode | string {
  if (jwksUrl === undefined || issuer === undefined) return { kind: 'in-process' }
  let url: URL
  try {
    url = new URL(jwksUrl)
  } catch {
    return '--jwks-url must be an http or https URL'
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return '--jwks-url must be an http or https URL'
  // A JWKS is public; credentials in its URL would end up in logs of every proxy on the way.
  if (url.username !== '' || url.password !== '') return '--jwks-url must not carry a user or password'
  if (issuer.trim() === '' || issuer !== issuer.trim())
    return '--issuer must be a non-empty string without surrounding spaces'
  return { kind: 'jwks', jwksUrl: url, issuer }
}

/**
 * Fetches the JWKS once before serving, so a wrong URL is said at start rather than as a 401 for every caller.
 * Resolves with undefined when it holds at least one key, else with a one-line reason.
 */
export async function probeJwks(url: URL, timeoutMs = 5000): Promise<string | undefined> {
  const where = shownUrl(url)
  let response: Response
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' })
  } catch (error) {
    if ((error as Error).name === 'TimeoutError')
      return `could not fetch the JWKS at ${where}: no answer in ${timeoutMs} ms`
    // fetch says only "fetch failed"; the cause names what happened (ECONNREFUSED, ENOTFOUND, a blocked port).
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    const why = cause?.code ?? cause?.message ?? (error as Error).message
    return `could not fetch the JWKS at ${where}: ${String(why).split('\n')[0]}`
  }
  if (response.status !== 200) {
    await response.body?.cancel()
    return `could not fetch the JWKS at ${where}: HTTP ${response.status}`
  }
  let body: unknown
  try {
    body = await response.json()
  } catch {
    return `the JWKS at ${where} is not JSON`
  }
  const keys = (body as { keys?: unknown } | null)?.keys
  if (!Array.isArray(keys) || keys.length === 0) return `the JWKS at ${where} holds no keys`
  return undefined
}

/** Parses `--budget-redis`: a redis:// or rediss:// URL, or a one-line usage error that does not echo it. */
export function redisUrl(value: string): URL | string {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return '--budget-redis must be a redis:// or rediss:// URL'
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    return '--budget-redis must be a redis:// or rediss:// URL'
  if (url.hostname === '') return '--budget-redis must name a host'
  return url
}

/** One Redis node by host and port (a sentinel, or a cluster's seed node). */
export interface RedisNode {
  host: string
  port: number
}

/**
 * Where the shared budget lives: one Redis by URL (`--budget-redis`), the master a set of sentinels names
 * (`--budget-redis-sentinels` and `--budget-redis-master`: on a failover the sentinels promote a replica and the
 * client follows), or a Redis Cluster by some of its nodes (`--budget-redis-cluster`).
 */
export type BudgetRedisTarget =
  | { kind: 'url'; url: URL }
  | { kind: 'sentinel'; sentinels: RedisNode[]; master: string }
  | { kind: 'cluster'; nodes: RedisNode[] }

/** Most nodes in --budget-redis-sentinels or --budget-redis-cluster. */
const MAX_REDIS_NODES = 64

/**
 * Parses the budget's Redis flags: `--budget-redis`, `--budget-redis-sentinels` (with `--budget-redis-master`) or
 * `--budget-redis-cluster` (the flag table lets at most one through). Undefined when none is given; a one-line usage
 * error naming the flag (never its value) when it does not parse.
 */
export function budgetRedisTarget(flags: {
  url: string | undefined
  sentinels: string | undefined
  master: string | undefined
  cluster: string | undefined
}): BudgetRedisTarget | undefined | string {
  if (flags.url !== undefined) {
    const url = redisUrl(flags.url)
    return typeof url === 'string' ? url : { kind: 'url', url }
  }
  if (flags.sentinels !== undefined) {
    const sentinels = redisNodes(flags.sentinels, '--budget-redis-sentinels')
    if (typeof sentinels === 'string') return sentinels
    if (flags.master === undefined || !/^[A-Za-z0-9._-]{1,100}$/.test(flags.master))
      return '--budget-redis-master must be 1 to 100 letters, digits, dots, dashes or underscores'
    return { kind: 'sentinel', sentinels, master: flags.master }
  }
  if (flags.cluster !== undefined) {
    const nodes = redisNodes(flags.cluster, '--budget-redis-cluster')
    return typeof nodes === 'string' ? nodes : { kind: 'cluster', nodes }
  }
  return undefined
}

/** `HOST:PORT,…` (an IPv6 host in brackets) as nodes, or a one-line usage error naming `flag`. */
function redisNodes(value: string, flag: string): RedisNode[] | string {
  const problem = `${flag} must be a comma-separated list of HOST:PORT (1 to ${MAX_REDIS_NODES})`
  const parts = value.split(',')
  if (parts.length > MAX_REDIS_NODES) return problem
  const nodes: RedisNode[] = []
  for (const part of parts) {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(part.trim())
    const port = Number(m?.[2])
    if (m === null || !(port >= 1 && port <= 65535)) return problem
    nodes.push({ host: (m[1] as string).replace(/^\[|\]$/g, ''), port })
  }
  return nodes
}

/** The target for a log line: hosts and ports, never a password. */
export function shownRedisTarget(target: BudgetRedisTarget): string {
  const list = (nodes: RedisNode[]) =>
    nodes.map((n) => (n.host.includes(':') ? `[${n.host}]:${n.port}` : `${n.host}:${n.port}`)).join(',')
  if (target.kind === 'url') return `redis ${target.url.hostname}:${target.url.port || '6379'}`
  if (target.kind === 'sentinel') return `redis master ${target.master} via sentinels ${list(target.sentinels)}`
  return `redis cluster ${list(target.nodes)}`
}

/** Checks `--budget-prefix`: non-empty printable text without spaces, so it cannot collide by accident. */
export function budgetPrefix(value: string | undefined): string | { error: string } {
  if (value === undefined) return DEFAULT_BUDGET_PREFIX
  if (!/^[\x21-\x7e]{1,200}$/.test(value)) {
    return { error: '--budget-prefix must be 1 to 200 printable characters without spaces' }
  }
  return value
}

/** A shared budget store on Redis and the connection to close with it. */
export interface SharedBudgetStore {
  store: RedisBudgetStore
  /** 2025-era sessions in the same Redis (under `<prefix>sessions:`), so a session continues on any replica. */
  sessions: RedisSessionStore
  /**
   * Resolves when Redis answers PING on the existing connection; rejects at once while it is not connected (no
   * command waits in the offline queue), so a readiness probe never waits for a reconnect.
   */
  ping(): Promise<void>
  close(): Promise<void>
}

/** Options of {@link connectBudgetStore}. */
export interface BudgetStoreConnection {
  /** The budget's key prefix (sessions go under `<prefix>sessions:`). */
  prefix: string
  /** The longest a Redis command may take, ms; then the call it charges is refused (503). Default 500. */
  commandTimeoutMs?: number
  /** When Redis comes back without the budget's state (no epoch key): reseed (default) or refuse. */
  onLostState?: 'reseed' | 'refuse'
  /** Replicas that must acknowledge each charge before its call is served (Redis WAIT); default 0: none. */
  replicas?: number
  /** One line when Redis cannot be reached (at start too) and one when it answers again; never one per retry. */
  onConnection: (message: string) => void
  /** What the budget store noticed, once per change: a charge failing, answering again, the state lost. */
  onStoreEvent?: (event: BudgetStoreEvent) => void
}

/**
 * Connects to Redis and pings it. A Redis that cannot be reached is not fatal, at start or later: the client keeps
 * reconnecting with capped backoff, calls meanwhile are refused by the budget (BudgetStoreError admits nothing; with
 * no offline queue a command fails at once instead of waiting for the reconnect), and `ping` fails until Redis
 * answers (the server's /readyz says 503). A frozen Redis costs a call at most the command timeout. The budget's epoch
 * key is written at start when Redis answers (else by the first charge), so a Redis that later comes back empty is
 * noticed. Lines name the host, never the password.
 */
export async function connectBudgetStore(
  target: BudgetRedisTarget,
  options: BudgetStoreConnection,
): Promise<SharedBudgetStore> {
  const where = shownRedisTarget(target).replace(/^redis /, '')
  const timeouts = { commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS }
  // Sentinel: the client asks the sentinels for the master, checks its role, and on a promotion (the sentinels'
  // +switch-master, or the old master gone) reconnects to the new one; Cluster: the client follows the slots.
  const redis =
    target.kind === 'url'
      ? new Redis(target.url.href, { lazyConnect: true, ...budgetRedisOptions(timeouts) })
      : target.kind === 'sentinel'
        ? new Redis({
            sentinels: target.sentinels,
            name: target.master,
            failoverDetector: true,
            lazyConnect: true,
            ...budgetRedisOptions(timeouts),
          })
        : new Cluster(target.nodes, { lazyConnect: true, ...budgetClusterOptions(timeouts) })
  // One line per outage: the first error after the connection was ready (or at start), then silence until it is back.
  let reported = false
  redis.on('error', (error: Error) => {
    if (reported) return
    reported = true
    options.onConnection(
      `the budget Redis at ${where} cannot be reached (${oneLine(error)}); calls are refused until it answers`,
    )
  })
  redis.on('ready', () => {
    if (!reported) return
    reported = false
    options.onConnection(`the budget Redis at ${where} answers again`)
  })
  const store = new RedisBudgetStore(redis, {
    prefix: options.prefix,
    onLostState: options.onLostState ?? 'reseed',
    replicas: options.replicas ?? 0,
    ...(options.onStoreEvent !== undefined && { onEvent: options.onStoreEvent }),
  })
  try {
    await redis.connect()
    await store.open()
  } catch {
    // Already reported by the error event; the client goes on reconnecting in the background.
  }
  return {
    store,
    sessions: new RedisSessionStore(redis, `${options.prefix}sessions:`),
    async ping() {
      if (redis.status !== 'ready') throw new Error(`the budget Redis is ${redis.status}`)
      await redis.ping()
    },
    async close() {
      // QUIT needs a connection; without one there is nothing to say goodbye to (and no retry may follow).
      if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect())
      else redis.disconnect()
    },
  }
}

// Redis error texts carry no credentials (ioredis never echoes the password), but may span lines.
function oneLine(error: unknown): string {
  return String((error as Error).message ?? error).split('\n')[0] as string
}
