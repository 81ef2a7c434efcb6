import type { IncomingMessage, ServerResponse } from 'node:http'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler } from '@modelcontextprotocol/server'
import { type AroundToolCall, createMcpEndpoint, LegacySessions, type SessionStore } from '@tollgate/mcp-endpoint'
import type { Audience } from './audience.js'
import type { Budget } from './budget/fair-budget.js'
import type { CallScheduler } from './fair-scheduler.js'
import type { HostAllowList } from './host-allow-list.js'
import { bearerAdmission } from './internal/bearer-admission.js'
import { createFastCalls, type FastCalls, SETTLED_ANSWER_BYTES } from './internal/fast-calls.js'
import { GateServer, type SdkExchanges } from './internal/gate-server.js'
import { turnTaking } from './internal/tool-call-turns.js'
import { bearerChallenge, metadataRoute, resourceIdentity } from './resource-metadata.js'
import { type CallReport, type GatedTool, toolTable } from './tools.js'

/** One event worth logging. Carries codes and tool names from the server's own table, never request values. */
export type GateEvent =
  | { kind: 'refused-token'; code: string; libraryError: string | undefined }
  | { kind: 'refused-host'; status: 421 | 403 }
  | { kind: 'refused-queue-full'; caller: string; limit: number }
  | { kind: 'fault'; code: string; tool?: string; error?: unknown }
  | ({ kind: 'call' } & CallReport)

/** Options of {@link createGate}. */
export interface GateOptions {
  serverInfo: { name: string; version: string }
  instructions?: string
  tools: readonly GatedTool[]
  audience: Audience
  /** Authorization servers named in the metadata; default `[audience.issuer]`. */
  authorizationServers?: readonly string[]
  /**
   * Scopes a client should ask the authorization server for, advertised as the metadata's `scopes_supported` and
   * the 401 challenge's `scope` (what an MCP client's scope selection reads); default none, and then both are
   * exactly as without this option. The same for every caller: never derived from a token, so it cannot tell a caller
   * what it lacks; but every listed scope is public, so list only scopes whose existence may be known.
   */
  advertisedScopes?: readonly string[]
  /** Charged once, first, on every tools/call. */
  budget: Budget
  /** DNS-rebinding allow-list; required, because an unconfigured guard would fail open. */
  allowList: HostAllowList
  /** Log hook. */
  onEvent?: (event: GateEvent) => void
  /** Largest request body accepted, bytes; default 1 MiB (larger gets 413). */
  maxBodyBytes?: number
  /** Orders tools/call requests by caller (fairness in time); default none: every call runs at once. */
  scheduler?: CallScheduler
  /** 2025-era sessions idle longer than this are closed; default 15 minutes. */
  sessionIdleMs?: number
  /** At most this many open 2025-era sessions; default 1000. */
  maxSessions?: number
  /** At most this many 2025-era sessions per caller (the oldest is closed); default 16. */
  maxSessionsPerCaller?: number
  /** Where open 2025-era sessions are recorded: a {@link RedisSessionStore} for several replicas; default memory. */
  sessionStore?: SessionStore
  /** MAC key of session ids (≥ 32 bytes), the same on every replica; default random per process. */
  sessionKey?: string | Uint8Array
  /** The whole request body must arrive within this many ms (else 408); default 30 000. */
  bodyTimeoutMs?: number
  /** At most this many request bodies being received at once (else 503); default 256. */
  maxUnfinishedBodies?: number
  /**
   * Serve plain tools/call requests (both eras) without a per-request SDK server, serialising each result once;
   * default true. false sends every request through the SDK (what the fast path must always agree with).
   */
  fastCalls?: boolean
  /** Cap of the kept serialised results of settled answers (GatedToolAnswer.settled), bytes; default 32 MiB. */
  settledAnswerBytes?: number
}

/** The gate as a node:http request listener, plus the addresses it derived. */
export interface Gate {
  /** Handles one request: Host/Origin guard, metadata, bearer audience, then MCP (both eras) on the resource path. */
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>
  readonly endpointPath: string
  readonly metadataPath: string
  readonly metadataUrl: string
  /** The fast path's counters (tests and benches read them); undefined when `fastCalls` is false. */
  readonly fastCalls: { readonly answered: number; readonly fromSettledBytes: number } | undefined
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
  const emit = options.onEvent ?? (() => {})
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576
  const pipeline = {
    table: toolTable(options.tools),
    budget: options.budget,
    onFault: (code: string, tool: string | undefined, error: unknown) =>
      emit({ kind: 'fault', code, ...(tool === undefined ? {} : { tool }), error }),
    onCall: options.onEvent === undefined ? undefined : (report: CallReport) => emit({ kind: 'call', ...report }),
  }
  // The tools/call exchanges the SDK serves, found by the charge inside it (see GateServer).
  const exchanges: SdkExchanges = new Map()
  const build = () =>
    new GateServer({ serverInfo: options.serverInfo, instructions: options.instructions, pipeline, exchanges })
  // legacy 'reject': 2025-era traffic never reaches this handler; the sessionful leg below owns it.
  const mcp = createMcpHandler(build, {
    legacy: 'reject',
    onerror: (error) => emit({ kind: 'fault', code: 'sdk', error }),
  })
  // The one scheduling point: a tool call waits for its caller's turn (both eras, fast path or SDK); everything else
  // is served at once. A caller whose queue is full is answered 429 at once, before any charge.
  const aroundToolCall = turnTaking(options.scheduler, exchanges, (caller, limit) =>
    emit({ kind: 'refused-queue-full', caller, limit }),
  )
  const fast =
    options.fastCalls === false
      ? undefined
      : createFastCalls({
          pipeline,
          serverInfo: options.serverInfo,
          settledAnswerBytes: options.settledAnswerBytes ?? SETTLED_ANSWER_BYTES,
        })
  const legacy = legacySessions(options, build, fast, aroundToolCall, emit)
  const endpoint = createMcpEndpoint({
    path: identity.endpointPath,
    allowList: options.allowList,
    body: {
      maxBodyBytes,
      ...(options.bodyTimeoutMs !== undefined ? { bodyTimeoutMs: options.bodyTimeoutMs } : {}),
      ...(options.maxUnfinishedBodies !== undefined ? { maxUnfinishedBodies: options.maxUnfinishedBodies } : {}),
    },
    admitHeaders: bearerAdmission(options.audience, bearerChallenge(identity, options.advertisedScopes), emit),
    modern: toNodeHandler(mcp, {
      maxRequestBodySize: maxBodyBytes,
      onerror: (error) => emit({ kind: 'fault', code: 'adapter', error }),
    }),
    ...(fast !== undefined ? { fastPath: fast.modern } : {}),
    legacy,
    aroundToolCall,
    onEvent: (event) => {
      // Body and parse refusals are the caller's and answered in full; only host refusals are gate events.
      if (event.kind === 'refused-host') emit({ kind: 'refused-host', status: event.status })
    },
  })
  const otherPath = metadataRoute(
    identity,
    options.authorizationServers ?? [options.audience.issuer],
    options.advertisedScopes,
  )
  return {
    handle: (req, res) => endpoint.handle(req, res, otherPath),
    endpointPath: identity.endpointPath,
    metadataPath: identity.metadataPath,
    metadataUrl: identity.metadataUrl,
    fastCalls: fast,
    async close() {
      await legacy.close()
      await mcp.close()
    },
  }
}

function legacySessions(
  options: GateOptions,
  build: () => GateServer,
  fast: FastCalls | undefined,
  aroundToolCall: AroundToolCall,
  emit: (event: GateEvent) => void,
): LegacySessions {
  return new LegacySessions({
    createServer: () => build(),
    ...(fast !== undefined ? { fastPath: fast.legacy } : {}),
    aroundToolCall,
    idleMs: options.sessionIdleMs ?? 15 * 60_000,
    maxSessionsPerCaller: options.maxSessionsPerCaller ?? 16,
    ...(options.maxSessions !== undefined ? { maxSessions: options.maxSessions } : {}),
    ...(options.sessionStore !== undefined ? { store: options.sessionStore } : {}),
    ...(options.sessionKey !== undefined ? { sessionKey: options.sessionKey } : {}),
    onError: (error) => emit({ kind: 'fault', code: 'legacy-transport', error }),
  })
}
