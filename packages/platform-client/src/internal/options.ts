// The client's options checked and resolved. Misuse is caller misuse: refused at construction with a TypeError or
// RangeError naming the option (never its value: options may sit next to secrets), not discovered per request.
import { validateHeaderName, validateHeaderValue } from 'node:http'
import type { PlatformClientOptions } from '../client.js'
import { type Era, MODERN_VERSION } from '../types.js'

/** The options with every default filled in. */
export type ResolvedOptions = Required<
  Omit<PlatformClientOptions, 'bearerToken' | 'edgeHeaders' | 'era' | 'ca' | 'signal'>
> &
  Pick<PlatformClientOptions, 'bearerToken' | 'edgeHeaders' | 'ca' | 'signal'> & { era: 'auto' | Era }

const defaultEraCache = new Map<string, Era>()

const DEFAULTS = {
  transport: 'mcp',
  allowPrivate: false,
  era: 'auto',
  timeoutMs: 30_000,
  maxBodyBytes: 1024 * 1024,
  maxAttempts: 3,
  retryDelayMs: 200,
  callTimeoutMs: 90_000,
  maxRetryAfterMs: 10_000,
} as const

/** Checks the options and fills in the defaults; throws TypeError or RangeError naming the option. */
export function resolveOptions(options: PlatformClientOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object')
  if (typeof options.secret !== 'string' || options.secret === '')
    throw new TypeError('secret is required (the signing secret)')
  if (typeof options.baseUrl !== 'string' || options.baseUrl === '') throw new TypeError('baseUrl is required')
  checkOptionValues(options)
  checkConfiguredHeaders(options)
  // An option given as undefined keeps its default (a spread would let it replace the default).
  const given = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined))
  return {
    ...DEFAULTS,
    now: () => new Date(),
    eraCache: defaultEraCache,
    ...given,
  } as ResolvedOptions
}

// Headers the protocol or the signature owns, and the ones the platform never sends: a configured edge header
// may not take their place (a Mcp-Param-* edge header would break "never sends Mcp-Param-*").
const RESERVED_HEADER =
  /^(host|content-type|content-length|transfer-encoding|connection|accept|authorization|idempotency-key|last-event-id|mcp-.*|x-supportroute-.*)$/i

// Misconfiguration is caller misuse: refused at construction, not discovered per request as a network failure.
function checkConfiguredHeaders(options: PlatformClientOptions): void {
  for (const [name, value] of Object.entries(options.edgeHeaders ?? {})) {
    if (RESERVED_HEADER.test(name)) throw new TypeError(`edge header ${name} is reserved`)
    try {
      validateHeaderName(name)
      validateHeaderValue(name, value)
    } catch {
      throw new TypeError(`edge header ${name} is not a valid header`)
    }
  }
  if (options.bearerToken !== undefined) {
    try {
      validateHeaderValue('authorization', `Bearer ${options.bearerToken}`)
    } catch {
      throw new TypeError('the bearer token is not a valid header value')
    }
    if (options.bearerToken === '') throw new TypeError('the bearer token is empty')
  }
}

const NUMERIC_OPTIONS = [
  // name, smallest accepted; at most 2^31-1 (what a timer accepts).
  ['timeoutMs', 1],
  ['maxBodyBytes', 1],
  ['maxAttempts', 1],
  ['retryDelayMs', 0],
  ['callTimeoutMs', 1],
  ['maxRetryAfterMs', 0],
] as const

// Misuse is refused at construction, naming the option (never its value: options may sit next to secrets).
function checkOptionValues(options: PlatformClientOptions): void {
  for (const [name, min] of NUMERIC_OPTIONS) {
    const value = options[name]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`${name} must be an integer`)
    if (value < min || value > 2 ** 31 - 1) throw new RangeError(`${name} must be between ${min} and ${2 ** 31 - 1}`)
  }
  const oneOf = (name: 'transport' | 'era', allowed: readonly string[]) => {
    const value = options[name]
    if (value !== undefined && !allowed.includes(value as string))
      throw new TypeError(`${name} must be one of ${allowed.join(', ')}`)
  }
  oneOf('transport', ['mcp', 'rest'])
  oneOf('era', ['auto', MODERN_VERSION, 'legacy'])
  if (options.allowPrivate !== undefined && typeof options.allowPrivate !== 'boolean')
    throw new TypeError('allowPrivate must be a boolean')
  if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError('now must be a function')
  if (options.eraCache !== undefined && !(options.eraCache instanceof Map))
    throw new TypeError('eraCache must be a Map')
  if (options.edgeHeaders !== undefined && (typeof options.edgeHeaders !== 'object' || options.edgeHeaders === null))
    throw new TypeError('edgeHeaders must be an object')
  if (options.bearerToken !== undefined && typeof options.bearerToken !== 'string')
    throw new TypeError('bearerToken must be a string')
  const ca = options.ca
  if (
    ca !== undefined &&
    !(typeof ca === 'string' ? ca !== '' : Array.isArray(ca) && ca.length > 0 && ca.every((c) => typeof c === 'string'))
  )
    throw new TypeError('ca must be a PEM string or a non-empty array of them')
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal))
    throw new TypeError('signal must be an AbortSignal')
}
