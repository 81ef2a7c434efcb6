// The handler wiring: one call context per binding over the same rules and tools, the MCP handlers of both eras,
// the fast paths, the door (@tollgate/mcp-endpoint) and the REST routes behind it.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler } from '@modelcontextprotocol/server'
import {
  BodyReader,
  createMcpEndpoint,
  defaultAllowList,
  type EndpointEvent,
  LegacySessions,
  type McpEndpoint,
} from '@tollgate/mcp-endpoint'
import type { Closers } from '@tollgate/operability'
import type { Logger } from 'pino'
import type { createAdmission } from '../http/authorize.js'
import { createLegacyFastPath, createModernFastPath } from '../http/modern-fast-path.js'
import { createServer, type ServerContext } from '../mcp/create-server.js'
import { bodyRefusalReason, type ProviderMetrics } from '../metrics.js'
import { createRestHandler } from '../rest/handler.js'
import { PgSessionStore } from '../store/pg-session-store.js'
import type { ProviderOptions } from './options.js'

type Era = ServerContext['era']

/** What every binding's calls share, made once at start; each binding reads the view tagged with its era. */
export type CallContext = Omit<ServerContext, 'era'>

export interface DoorWiring {
  options: ProviderOptions
  path: string
  calls: CallContext
  admission: ReturnType<typeof createAdmission>
  logger: Logger | undefined
  metrics: ProviderMetrics | undefined
  now: () => number
  /** The MCP handler and the legacy sessions are added here as they start. */
  closers: Closers
}

export interface Door {
  /** Serves one request that is not a health path: MCP at `path`, REST everywhere else. */
  serve(req: IncomingMessage, res: ServerResponse): void
  endpoint: McpEndpoint
  legacy: LegacySessions
}

/** Wires both bindings behind the door; resolves once the sessions' store (PostgreSQL with a postgres store) opened. */
export async function wireDoor(wiring: DoorWiring): Promise<Door> {
  const { options, logger, metrics, closers } = wiring
  const byEra = {
    modern: { ...wiring.calls, era: 'modern' },
    legacy: { ...wiring.calls, era: 'legacy' },
    rest: { ...wiring.calls, era: 'rest' },
  } satisfies Record<Era, ServerContext>
  const mcp = createMcpHandler(({ era }) => createServer(byEra[era]), {
    legacy: 'reject',
    responseMode: options.responseMode ?? 'auto',
    onerror: (e) => logger?.debug({ err_name: e.name }, 'mcp protocol error'),
  })
  closers.add('mcp handler', () => mcp.close().catch(() => {}))
  const legacy = await openLegacySessions(options, byEra.legacy, wiring.now, logger, closers)
  const bodyReader = new BodyReader({
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    ...(options.bodyTimeoutMs !== undefined && { bodyTimeoutMs: options.bodyTimeoutMs }),
    ...(options.maxUnfinishedBodies !== undefined && { maxUnfinishedBodies: options.maxUnfinishedBodies }),
  })
  const endpoint = createMcpEndpoint({
    path: wiring.path,
    allowList: allowList(options),
    body: bodyReader,
    // Money is integer minor units: a number written 2000.0 or 2e3 is refused with the rest of the strict rules.
    json: { maxDepth: 64, integersOnly: true },
    admitHeaders: wiring.admission.admitHeaders,
    admitBody: wiring.admission.admitBody,
    modern: toNodeHandler(mcp),
    // The fast path answers JSON, as the SDK does in 'auto' and 'json' modes; 'sse' stays with the SDK.
    ...(options.modernFastPath !== false &&
      options.responseMode !== 'sse' && { fastPath: createModernFastPath(byEra.modern) }),
    legacy,
    refusalBody: providerEnvelope,
    onEvent: (event) => {
      if (metrics !== undefined) countRefusal(metrics, event)
      if (event.kind === 'refused-admission')
        // reason is for metrics only; the caller gets the same fixed body whatever failed.
        logger?.warn({ reason: event.reason, stage: event.stage }, 'request rejected: credentials')
      else if (event.kind !== 'fast-path') logger?.info(event, 'request refused')
    },
  })
  // The REST binding: every path other than the MCP endpoint (so an unsigned request to any path gets 401 first),
  // reading bodies with the same reader (its unfinished-body cap counts both bindings).
  const otherPaths = createRestHandler({ ctx: byEra.rest, bodies: bodyReader, admission: wiring.admission })
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    endpoint.handle(req, res, otherPaths).catch((error: unknown) => {
      logger?.error({ err_name: error instanceof Error ? error.name : 'unknown' }, 'request failed')
      if (!res.headersSent) {
        const body = '{"error":{"code":"internal_error","message":"the provider failed","retryable":true}}'
        res.writeHead(500, { 'content-type': 'application/json' }).end(body)
      } else res.destroy()
    })
  }
  return { serve, endpoint, legacy }
}

/** The 2025-era sessions, recorded in `sessionStore`, else PostgreSQL with a postgres store, else memory. */
async function openLegacySessions(
  options: ProviderOptions,
  ctx: ServerContext,
  now: () => number,
  logger: Logger | undefined,
  closers: Closers,
): Promise<LegacySessions> {
  const opened =
    options.sessionStore === undefined && options.store?.kind === 'postgres'
      ? await PgSessionStore.open({
          connectionString: options.store.connectionString,
          ...(options.store.schema !== undefined && { schema: options.store.schema }),
        })
      : undefined
  const sessionStore = options.sessionStore ?? opened
  // Closing the sessions disposes their store; a store opened here is disposed even if the sessions never started.
  let legacy: LegacySessions | undefined
  closers.add('legacy sessions', () => (legacy !== undefined ? legacy.close() : opened?.dispose()))
  legacy = new LegacySessions({
    createServer: () => createServer(ctx),
    jsonResponses: (options.legacyResponseMode ?? 'json') === 'json',
    now,
    // The 2025-era fast path answers JSON too; SSE sessions stay with the SDK.
    ...(options.modernFastPath !== false &&
      options.legacyResponseMode !== 'sse' && { fastPath: createLegacyFastPath(ctx) }),
    ...(sessionStore !== undefined && { store: sessionStore }),
    ...(options.sessionKey !== undefined && { sessionKey: options.sessionKey }),
    ...(options.sessionIdleTtlMs !== undefined && { idleMs: options.sessionIdleTtlMs }),
    ...(options.maxSessions !== undefined && { maxSessions: options.maxSessions }),
    onError: (e) => logger?.debug({ err_name: e instanceof Error ? e.name : 'unknown' }, 'legacy session error'),
  })
  return legacy
}

/** localhost, 127.0.0.1, [::1], publicHost, the listen host and `allowedHosts`; false turns the check off. */
function allowList(options: ProviderOptions) {
  if (options.allowedHosts === false) return false
  const listenHost = options.host ?? '127.0.0.1'
  return defaultAllowList([
    ...(options.publicHost !== undefined ? [options.publicHost] : []),
    ...(listenHost !== '0.0.0.0' && listenHost !== '::' ? [listenHost] : []),
    ...(options.allowedHosts ?? []),
  ])
}

/** Counts a refusal made at the MCP door (Host/Origin before routing, so for both bindings). */
function countRefusal(metrics: ProviderMetrics, event: EndpointEvent): void {
  if (event.kind === 'refused-host') metrics.refused('none', event.status === 421 ? 'host' : 'origin')
  else if (event.kind === 'refused-admission')
    metrics.refused('mcp', event.stage === 'headers' ? 'credentials' : 'signature')
  else if (event.kind === 'refused-body') metrics.refused('mcp', bodyRefusalReason(event.code))
  else if (event.kind === 'refused-json') metrics.refused('mcp', 'not_json')
}

/** The provider's error envelope, for refusals made before any MCP exchange (404, 408, 413, 503). */
function providerEnvelope(status: number, code: string, message: string): string {
  const envelopeCode = status === 404 ? 'not_found' : status === 503 ? 'unavailable' : 'invalid_request'
  void code
  return JSON.stringify({ error: { code: envelopeCode, message, retryable: status === 503 || status === 408 } })
}
