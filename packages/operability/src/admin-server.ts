// The admin listener: a node:http server of its own (not the public port) serving GET /metrics from a server's
// prom-client Registry, and /livez and /readyz through the server's health endpoints. Loopback by default, so
// nothing operational is exposed unless the operator binds it elsewhere on purpose.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'

/** What answers /livez and /readyz: true when it answered the request, false to leave it (then 404). */
export interface HealthEndpoints {
  handle(req: IncomingMessage, res: ServerResponse): boolean | Promise<boolean>
}

export interface AdminServerOptions {
  /** Listen address; default 127.0.0.1. */
  host?: string
  /** Listen port (0: any free port). */
  port: number
  /** The server's own registry (createMetricsRegistry). */
  registry: Registry
  /** Answers /livez and /readyz; without it both are 404. */
  health?: HealthEndpoints
  /** Called when rendering /metrics fails (a collect() threw); the scrape gets a 500. Never given a request value. */
  onError?: (error: unknown) => void
}

export interface RunningAdminServer {
  /** http://host:port */
  url: string
  host: string
  port: number
  close(): Promise<void>
}

const HEALTH_PATHS = new Set(['/livez', '/readyz'])

function plain(res: ServerResponse, status: number, body: string, extra: Record<string, string> = {}) {
  res
    .writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      ...extra,
    })
    .end(body)
}

async function serveMetrics(req: IncomingMessage, res: ServerResponse, options: AdminServerOptions) {
  let text: string
  try {
    text = await options.registry.metrics()
  } catch (error) {
    options.onError?.(error)
    plain(res, 500, 'metrics could not be collected\n')
    return
  }
  res.writeHead(200, {
    'content-type': options.registry.contentType,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  })
  res.end(req.method === 'HEAD' ? undefined : text)
}

async function route(req: IncomingMessage, res: ServerResponse, options: AdminServerOptions) {
  // A body is never read here: drain whatever was sent so the connection stays usable.
  req.resume()
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  const known = path === '/metrics' || HEALTH_PATHS.has(path)
  if (!known) return plain(res, 404, 'not found\n')
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return plain(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' })
  if (path === '/metrics') return serveMetrics(req, res, options)
  if (options.health !== undefined && (await options.health.handle(req, res))) return
  return plain(res, 404, 'not found\n')
}

/**
 * Starts the admin listener. Rejects with the listen error (e.g. EADDRINUSE) before anything is served; RangeError
 * for a port outside 0–65535.
 */
export async function startAdminServer(options: AdminServerOptions): Promise<RunningAdminServer> {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535)
    throw new RangeError('the admin port must be a whole number from 0 to 65535')
  const host = options.host ?? '127.0.0.1'
  const server: Server = createServer((req, res) => {
    route(req, res, options).catch((error: unknown) => {
      options.onError?.(error)
      if (!res.headersSent) plain(res, 500, 'admin request failed\n')
      else res.destroy()
    })
  })
  // A scraper or a probe sends small requests: no reason to wait long for one.
  server.headersTimeout = 10_000
  server.requestTimeout = 10_000
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address
  let closing: Promise<void> | undefined
  return {
    url: `http://${hostForUrl}:${address.port}`,
    host: address.address,
    port: address.port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return closing
    },
  }
}
