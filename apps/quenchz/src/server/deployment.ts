// Deployment options of the CLI: a real issuer by JWKS URL, and a fair budget shared through Redis.
// Every message here names a location without its credentials: a URL's user, password and query never appear.
import { RedisBudgetStore, RedisSessionStore } from '@tollgate/gate'
import { Redis } from 'ioredis'

/** Where bearer tokens come from: the in-process issuer (mints the manifest) or a real issuer's JWKS. */
export type TokenMode = { kind: 'in-process' } | { kind: 'jwks'; jwksUrl: URL; issuer: string }

/** The default key prefix of the shared budget. */
export const DEFAULT_BUDGET_PREFIX = 'quenchz:budget:'

/** A URL shown without user, password, query or fragment. */
export function shownUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`
}

/** Parses `--jwks-url` and `--issuer` (both or neither). Returns the mode, or a one-line usage error. */
export function tokenMode(jwksUrl: string | undefined, issuer: string | undefined): TokenMode | string {
  if (jwksUrl === undefined && issuer === undefined) return { kind: 'in-process' }
  if (jwksUrl === undefined || issuer === undefined) return '--jwks-url and --issuer go together: pass both or neither'
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

/** Checks `--budget-prefix`: non-empty printable text without spaces, so it cannot collide by accident. */
export function budgetPrefix(value: string | undefined): string | { error: string } {
  if (value === undefined) return DEFAULT_BUDGET_PREFIX
  if (!/^[\x21-\x7e]{1,200}$/.test(value)) {
    return { error: '--budget-prefix must be 1 to 200 printable characters without spaces' }
  }
  return value
}

/** A connected shared budget store and the connection to close with it. */
export interface SharedBudgetStore {
  store: RedisBudgetStore
  /** 2025-era sessions in the same Redis (under `<prefix>sessions:`), so a session continues on any replica. */
  sessions: RedisSessionStore
  close(): Promise<void>
}

/**
 * Connects to Redis and pings it. Rejects with an Error whose message is one line naming the host, never the
 * password. Once connected, a lost connection is retried with backoff; calls made meanwhile are refused by the
 * budget (BudgetStoreError admits nothing).
 */
export async function connectBudgetStore(
  url: URL,
  prefix: string,
  onError: (message: string) => void,
): Promise<SharedBudgetStore> {
  let starting = true
  const redis = new Redis(url.href, {
    lazyConnect: true,
    connectTimeout: 3000,
    maxRetriesPerRequest: 1,
    // At start a failure is final (the CLI says so and exits); later, reconnect with capped backoff.
    retryStrategy: (times) => (starting ? null : Math.min(times * 200, 2000)),
  })
  // The socket's own error says more than the rejection ("Connection is closed."), so it is kept for the message.
  let firstError: unknown
  redis.on('error', (error: Error) => {
    if (starting) firstError ??= error
    else onError(`redis: ${oneLine(error)}`)
  })
  try {
    await redis.connect()
    await redis.ping()
  } catch (error) {
    redis.disconnect()
    const why = oneLine(firstError ?? error)
    throw new Error(`could not reach the budget Redis at ${url.hostname}:${url.port || '6379'}: ${why}`)
  }
  starting = false
  return {
    store: new RedisBudgetStore(redis, { prefix }),
    sessions: new RedisSessionStore(redis, `${prefix}sessions:`),
    async close() {
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}

// Redis error texts carry no credentials (ioredis never echoes the password), but may span lines.
function oneLine(error: unknown): string {
  return String((error as Error).message ?? error).split('\n')[0] as string
}
