// Connection-level limits for the node:http server in front of the endpoint: Node's own defaults let one slow
// client hold a connection for 300 s and accept any number of connections.
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { EndpointConfigError } from './errors.js'
import { checkTlsCredentials, type TlsCredentials } from './tls.js'

export interface ConnectionLimits {
  /** All request headers must arrive within this many ms. Default 10 000 (Node: 60 000). */
  headersTimeoutMs?: number
  /** The whole request (headers and body) must arrive within this many ms. Default 30 000 (Node: 300 000). */
  requestTimeoutMs?: number
  /** An idle keep-alive connection is closed after this many ms. Default 5 000. */
  keepAliveTimeoutMs?: number
  /** A keep-alive connection serves at most this many requests, then closes. Default 1 000. */
  maxRequestsPerSocket?: number
  /** At most this many open connections; further ones are closed at once. Default 1 024. */
  maxConnections?: number
}

export interface ResolvedConnectionLimits {
  headersTimeoutMs: number
  requestTimeoutMs: number
  keepAliveTimeoutMs: number
  maxRequestsPerSocket: number
  maxConnections: number
}

function whole(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min)
    throw new EndpointConfigError(`${name} must be a whole number ≥ ${min}`)
  return value
}

export function resolveConnectionLimits(limits: ConnectionLimits = {}): ResolvedConnectionLimits {
  const headersTimeoutMs = whole('headersTimeoutMs', limits.headersTimeoutMs ?? 10_000, 1)
  const requestTimeoutMs = whole('requestTimeoutMs', limits.requestTimeoutMs ?? 30_000, 1)
  if (requestTimeoutMs < headersTimeoutMs) throw new EndpointConfigError('requestTimeoutMs must be ≥ headersTimeoutMs')
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    keepAliveTimeoutMs: whole('keepAliveTimeoutMs', limits.keepAliveTimeoutMs ?? 5_000, 1),
    maxRequestsPerSocket: whole('maxRequestsPerSocket', limits.maxRequestsPerSocket ?? 1_000, 1),
    maxConnections: whole('maxConnections', limits.maxConnections ?? 1_024, 1),
  }
}

/**
 * A node:http server with {@link ConnectionLimits} applied (throws EndpointConfigError on a bad limit); with `tls`,
 * a node:https server with the same limits (throws TlsCredentialsError on a pair that cannot serve; see
 * replaceTlsCredentials to swap it while serving). Both are typed as node:http's Server: https.Server runs the same
 * HTTP machinery over TLS sockets, so every http.Server member callers use is there.
 */
export function createLimitedServer(
  listener: RequestListener,
  limits: ConnectionLimits = {},
  tls?: TlsCredentials,
): Server {
  const l = resolveConnectionLimits(limits)
  const options: ServerOptions = {
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    keepAliveTimeout: l.keepAliveTimeoutMs,
    // Node checks the two timeouts above on this interval (default 30 s): check often enough to honour them.
    connectionsCheckingInterval: Math.min(1_000, l.headersTimeoutMs),
  }
  let server: Server
  if (tls === undefined) server = createServer(options, listener)
  else {
    checkTlsCredentials(tls)
    server = createHttpsServer({ ...options, cert: tls.cert, key: tls.key }, listener) as unknown as Server
  }
  server.maxRequestsPerSocket = l.maxRequestsPerSocket
  server.maxConnections = l.maxConnections
  return server
}
