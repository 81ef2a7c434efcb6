// The provider's two listeners: the public port (health paths from the start, every other request once wired) and
// the optional admin port (/metrics, /livez, /readyz).
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createLimitedServer } from '@tollgate/mcp-endpoint'
import { GracefulServer, Health, isHealthPath, type RunningAdminServer, startAdminServer } from '@tollgate/operability'
import type { Logger } from 'pino'
import type { ProviderMetrics } from '../metrics.js'
import { errorFacts } from './log-facts.js'
import type { ProviderOptions } from './options.js'

type Handler = (req: IncomingMessage, res: ServerResponse) => void

/** The public port, listening. */
export interface PublicListener {
  server: Server
  graceful: GracefulServer
  /** Readiness as /readyz answers it; its store check fails until `setStoreCheck`. */
  health: Health
  /** Serves every request other than the health paths with `handler` from now on (until then: 503 starting). */
  serve(handler: Handler): void
  /** Its URL's scheme, host and port (http://host:port; https:// with tls). */
  origin: string
  port: number
  host: string
  /** Cuts every connection and stops listening (a start that failed); nothing once the server has closed. */
  cut(): Promise<void>
}

/** What every request other than /livez and /readyz gets while the store is not open yet. */
function answerStarting(_req: IncomingMessage, res: ServerResponse): void {
  const body = '{"error":{"code":"unavailable","message":"the provider is starting","retryable":true}}'
  res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '2' }).end(body)
}

function readinessHealth(logger: Logger | undefined): Health {
  return new Health({
    checks: { store: () => Promise.reject(new Error('the provider is starting')) },
    onChange: ({ ready, failing }) => {
      if (ready) logger?.info('ready')
      // The check's error class and code only: a driver's message can quote a value.
      else
        logger?.warn(
          { failing: failing.map((f) => ({ check: f.name, ...errorFacts(f.error) })) },
          'not ready: /readyz answers 503',
        )
    },
  })
}

/**
 * Listens on the public port before the store opens, answering the health paths from the start; `serve` replaces
 * the 503 once every call is wired (store open, demo ledger seeded, port checked).
 */
export async function listenPublic(options: ProviderOptions, logger: Logger | undefined): Promise<PublicListener> {
  const health = readinessHealth(logger)
  let serve: Handler = answerStarting
  const server: Server = createLimitedServer(
    (req, res) => {
      // Before Host, signatures and tokens: a balancer probes with its own Host and no credentials.
      if (isHealthPath(req.url) && health.handle(req, res)) return
      serve(req, res)
    },
    // 65 s keep-alive: longer than the usual load balancer idle timeout (60 s), so the balancer closes first.
    { keepAliveTimeoutMs: 65_000, ...options.connections },
    options.tls,
  )
  const graceful = new GracefulServer(server, {
    ...(options.shutdownDeadlineMs !== undefined && { deadlineMs: options.shutdownDeadlineMs }),
    ...(options.shutdownDelayMs !== undefined && { delayMs: options.shutdownDelayMs }),
    health,
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve())
  })
  const address = server.address() as AddressInfo
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    server,
    graceful,
    health,
    serve: (handler) => {
      serve = handler
    },
    origin: `${options.tls === undefined ? 'http' : 'https'}://${hostForUrl}:${address.port}`,
    port: address.port,
    host: address.address,
    cut: async () => {
      if (!server.listening) return
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The admin listener serving `metrics`' registry and `health` (its listening address logged). */
export async function startAdmin(
  options: ProviderOptions,
  adminPort: number,
  metrics: ProviderMetrics,
  health: Health,
  logger: Logger | undefined,
): Promise<RunningAdminServer> {
  const admin = await startAdminServer({
    port: adminPort,
    ...(options.adminHost !== undefined && { host: options.adminHost }),
    registry: metrics.registry,
    health,
    onError: (e) => logger?.warn({ err_name: e instanceof Error ? e.name : 'unknown' }, 'metrics scrape failed'),
  })
  logger?.info({ host: admin.host, port: admin.port, paths: ['/metrics', '/livez', '/readyz'] }, 'admin listening')
  return admin
}
