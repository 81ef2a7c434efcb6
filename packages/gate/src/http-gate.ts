import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler, toWebRequest } from '@modelcontextprotocol/node'
import { type AuthInfo, createMcpHandler, isLegacyRequest } from '@modelcontextprotocol/server'
import type { Admission, Audience } from './audience.js'
import type { Budget } from './budget/fair-budget.js'
import { GateError, TokenRefused } from './errors.js'
import { type HostAllowList, hostGuard } from './host-allow-list.js'
import { buildGateServer, type FaultReporter } from './internal/gate-server.js'
import { LegacySessions } from './internal/legacy-sessions.js'
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
  /** Largest request body accepted, bytes; default 1 MiB (larger gets 413). */
  maxBodyBytes?: number
  /** 2025-era sessions idle longer than this are closed; default 15 minutes. */
  sessionIdleMs?: number
  /** At most this many open 2025-era sessions; default 1000. */
  maxSessions?: number
  /** At most this many 2025-era sessions per caller (the oldest is closed); default 16. */
  maxSessionsPerCaller?: number
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
 * Creates the remote-MCP gate, behind which both protocol eras are served on one path: 2026-07-28 requests by the
 * SDK v2 `createMcpHandler` (a fresh server per request, stateless), 2025-era requests by a sessionful leg
 * (`Mcp-Session-Id`, JSON answers, sessions bound to the caller that opened them). In front of both: the
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
  const onFault: FaultReporter = (code, tool, error) =>
    emit({ kind: 'fault', code, ...(tool === undefined ? {} : { tool }), error })
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576
  const build = () =>
    buildGateServer({
      serverInfo: options.serverInfo,
      instructions: options.instructions,
      table,
      budget: options.budget,
      onFault,
    })
  // legacy 'reject': 2025-era traffic never reaches this handler; the sessionful leg below owns it.
  const mcp = createMcpHandler(build, {
    legacy: 'reject',
    onerror: (error) => emit({ kind: 'fault', code: 'sdk', error }),
  })
  const modern = toNodeHandler(mcp, {
    maxRequestBodySize: maxBodyBytes,
    onerror: (error) => emit({ kind: 'fault', code: 'adapter', error }),
  })
  const legacy = new LegacySessions({
    build,
    ...(options.sessionIdleMs !== undefined ? { idleMs: options.sessionIdleMs } : {}),
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.maxSessionsPerCaller !== undefined ? { maxSessionsPerCaller: options.maxSessionsPerCaller } : {}),
    onError: (error) => emit({ kind: 'fault', code: 'legacy-transport', error }),
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
    const raw = await readBody(req, maxBodyBytes)
    if (raw === undefined) {
      return send(res, 413, { 'content-type': 'application/json', connection: 'close' }, TOO_LARGE)
    }
    // The body has been read once; both legs get a replay of the same bytes.
    const replay = replayOf(req, raw, auth)
    const parsed = parseOrUndefined(raw)
    if (await isLegacyRequest(await toWebRequest(replay), parsed)) {
      // The legacy transport takes the parsed body and never reads the (consumed) stream again.
      ;(req as IncomingMessage & { auth?: AuthInfo }).auth = auth
      await legacy.handle(req, res, parsed, admission.subject)
    } else {
      await modern(replay as unknown as IncomingMessage, res)
    }
  }

  return {
    handle,
    endpointPath: identity.endpointPath,
    metadataPath: identity.metadataPath,
    metadataUrl: identity.metadataUrl,
    async close() {
      await legacy.close()
      await mcp.close()
    },
  }
}

const TOO_LARGE = '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Request body too large"},"id":null}'

/** Reads the whole body, or undefined once it passes `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > max) return undefined
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

// A structural stand-in for the request whose stream was consumed: a fresh iterator over the same bytes per use.
function replayOf(req: IncomingMessage, raw: Buffer, auth: AuthInfo) {
  return {
    method: req.method,
    url: req.url,
    headers: req.headers,
    auth,
    async *[Symbol.asyncIterator]() {
      if (raw.length > 0) yield raw
    },
  }
}

function parseOrUndefined(raw: Buffer): unknown {
  if (raw.length === 0) return undefined
  try {
    return JSON.parse(raw.toString('utf8'))
  } catch {
    // Not JSON: the SDK's own parser answers it with the proper JSON-RPC parse error.
    return undefined
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
