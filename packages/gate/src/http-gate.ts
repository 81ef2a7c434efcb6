import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { type AuthInfo, createMcpHandler } from '@modelcontextprotocol/server'
import type { Admission, Audience } from './audience.js'
import type { Budget } from './budget/fair-budget.js'
import { GateError, TokenRefused } from './errors.js'
import { type HostAllowList, hostGuard } from './host-allow-list.js'
import { buildGateServer, type FaultReporter } from './internal/gate-server.js'
import { bearerChallenge, protectedResourceMetadata, resourceIdentity, UNAUTHORIZED_BODY } from './resource-metadata.js'
import { type GatedTool, toolTable } from './tools.js'

/** One event worth logging. Carries codes and tool names from the server's own table, never request values. */
export type GateEvent =
  | { kind: 'refused-token'; code: string; libraryError: string | undefined }
  | { kind: 'refused-host'; status: 421 | 403 }
  | { kind: 'fault'; code: string; tool?: string; error?: unknown }

/** Options of {@link createGate}. */
export interface GateOptions {
  serverInfo: { name: string; version: string }
  instructions?: string
  tools: readonly GatedTool[]
  audience: Audience
  /** Authorization servers named in the metadata; default `[audience.issuer]`. */
  authorizationServers?: readonly string[]
  /** Charged once, first, on every tools/call. */
  budget: Budget
  /** DNS-rebinding allow-list; required, because an unconfigured guard would fail open. */
  allowList: HostAllowList
  /** Log hook. */
  onEvent?: (event: GateEvent) => void
  /** Largest request body accepted, bytes; default 1 MiB. */
  maxBodyBytes?: number
}

/** The gate as a node:http request listener, plus the addresses it derived. */
export interface Gate {
  /** Handles one request: Host/Origin guard, metadata, bearer audience, then MCP (both eras) on the resource path. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>
  readonly endpointPath: string
  readonly metadataPath: string
  readonly metadataUrl: string
  close(): Promise<void>
}

/**
 * Creates the remote-MCP gate. The MCP side is the SDK v2 `createMcpHandler` (a fresh server per HTTP request,
 * 2026-07-28 requests served statelessly and 2025-era requests by its stateless legacy leg), behind: the
 * Host/Origin allow-list (421/403), the unauthenticated RFC 9728 metadata document, and the bearer audience
 * check (every refusal one 401 with a `Bearer` challenge naming the metadata). Scope is never enforced here.
 */
export function createGate(options: GateOptions): Gate {
  const identity = resourceIdentity(options.audience.resource)
  const metadata = JSON.stringify(
    protectedResourceMetadata(identity.resource, options.authorizationServers ?? [options.audience.issuer]),
  )
  const challenge = bearerChallenge(identity)
  const guard = hostGuard(options.allowList)
  const table = toolTable(options.tools)
  const emit = options.onEvent ?? (() => {})
  const onFault: FaultReporter = (code, tool, error) => emit({ kind: 'fault', code, tool, error })
  const mcp = createMcpHandler(
    (ctx) => {
      const auth = ctx.authInfo
      return buildGateServer({
        serverInfo: options.serverInfo,
        instructions: options.instructions,
        table,
        budget: options.budget,
        caller: { id: auth?.clientId ?? '', scopes: auth?.scopes ?? [] },
        onFault,
      })
    },
    { onerror: (error) => emit({ kind: 'fault', code: 'sdk', error }) },
  )
  const node = toNodeHandler(mcp, {
    maxRequestBodySize: options.maxBodyBytes ?? 1_048_576,
    onerror: (error) => emit({ kind: 'fault', code: 'adapter', error }),
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const verdict = guard({ host: req.headers.host, origin: header(req, 'origin') })
    if (!verdict.ok) {
      emit({ kind: 'refused-host', status: verdict.status })
      return send(res, verdict.status, { 'content-type': 'text/plain; charset=utf-8' }, verdict.body)
    }
    const path = (req.url ?? '/').split('?')[0]
    if (path === identity.metadataPath) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { allow: 'GET, HEAD' }, '')
      return send(res, 200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }, metadata)
    }
    if (path !== identity.endpointPath)
      return send(res, 404, { 'content-type': 'text/plain; charset=utf-8' }, 'Not Found')
    let admission: Admission
    try {
      admission = await options.audience.admit(header(req, 'authorization'))
    } catch (error) {
      if (error instanceof TokenRefused) {
        emit({ kind: 'refused-token', code: error.code, libraryError: error.libraryError })
        return send(res, 401, { 'www-authenticate': challenge, 'content-type': 'application/json' }, UNAUTHORIZED_BODY)
      }
      // Keys unavailable or anything unexpected: the server's fault, never dressed up as the caller's bad token.
      emit({ kind: 'fault', code: error instanceof GateError ? error.code : 'audience', error })
      return send(
        res,
        503,
        { 'content-type': 'application/json', 'retry-after': '5' },
        '{"error":"temporarily_unavailable"}',
      )
    }
    const auth: AuthInfo = {
      token: admission.token,
      clientId: admission.subject,
      scopes: admission.scopes,
      expiresAt: admission.expiresAt,
      resource: new URL(admission.resource),
    }
    ;(req as IncomingMessage & { auth?: AuthInfo }).auth = auth
    await node(req, res)
  }

  return {
    handle,
    endpointPath: identity.endpointPath,
    metadataPath: identity.metadataPath,
    metadataUrl: identity.metadataUrl,
    close: () => mcp.close(),
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}
