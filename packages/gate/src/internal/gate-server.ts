import { AsyncLocalStorage } from 'node:async_hooks'
import type { ServerResponse } from 'node:http'
import {
  type CallToolResult,
  type JSONRPCRequest,
  type Result,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server'
import type { Budget } from '../budget/fair-budget.js'
import {
  BUDGET_UNAVAILABLE_ERROR,
  type CallReport,
  type CompiledTool,
  describeSchemaErrors,
  type GatedToolAnswer,
  NO_SUCH_TOOL,
  OVER_BUDGET,
  type ToolTable,
} from '../tools.js'

/** Who is calling, as the audience check established it. */
export interface Caller {
  /** Token `sub`; the empty string when there is none (no reserve: always over budget). */
  id: string
  scopes: readonly string[]
}

/** Reports a server-side fault; never given caller input (the tool name, when given, is the server's own). */
export type FaultReporter = (
  code: 'tool-threw' | 'output-schema' | 'budget-store',
  toolName: string | undefined,
  error?: unknown,
) => void

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>

/**
 * The HTTP exchange a tools/call belongs to, as the gate needs it at the charge: whether the client is still there,
 * and a flag set when the budget store could not charge (the answer is then a 503). The fast path passes it; on the
 * SDK path it travels in {@link callScope}, set around the SDK leg by the HTTP gate.
 */
export interface CallScope {
  gone(): boolean
  budgetUnavailable: boolean
}

/** The SDK path's CallScope (the SDK gives its handlers no access to the HTTP response). */
export const callScope = new AsyncLocalStorage<CallScope>()

/** A CallScope over a node response: the client has gone once its socket is destroyed (or was never there). */
export function scopeOf(res: ServerResponse): CallScope {
  return { gone: () => res.socket?.destroyed !== false, budgetUnavailable: false }
}

/** What the SDK turns into the JSON-RPC error of a call the budget store could not charge (numeric code, data). */
class BudgetUnavailable extends Error {
  readonly code = BUDGET_UNAVAILABLE_ERROR.code
  readonly data = BUDGET_UNAVAILABLE_ERROR.data
  constructor() {
    super(BUDGET_UNAVAILABLE_ERROR.message)
  }
}

const refusal = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true })

/**
 * The SDK's low-level Server with one interception point for `tools/call`, placed in the documented
 * `_wrapHandler` hook so it runs on the raw request before the SDK validates params or looks anything up:
 * 1. charge the budget (every call, whatever the name); 2. refuse unknown and ungranted names with one constant;
 * 3. only then hand over to the SDK's own validation and the tool. `McpServer` has no such hook, hence `Server`.
 */
export class GateServer extends Server {
  gate:
    | ((request: JSONRPCRequest, ctx: ServerContext, scope?: CallScope) => Promise<CallToolResult | undefined>)
    | undefined
  report: ((request: JSONRPCRequest, ctx: ServerContext, result: Result, startedMs: number) => void) | undefined
  /** The registered tools/call handler's own work, also with the tool's answer (the fast path's use of it). */
  serveGranted:
    | ((
        request: { params?: unknown },
        ctx: ServerContext,
      ) => Promise<{ result: CallToolResult; answer?: GatedToolAnswer }>)
    | undefined

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const inner = super._wrapHandler(method, handler)
    if (method !== 'tools/call') return inner
    return async (request, ctx) => {
      const startedMs = performance.now()
      const refused = this.gate ? await this.gate(request, ctx, callScope.getStore()) : refusal(NO_SUCH_TOOL)
      const result = refused ?? (await inner(request, ctx))
      this.report?.(request, ctx, result, startedMs)
      return result
    }
  }
}

const CHARGED_FROM: Record<string, CallReport['charged']> = {
  "admitted from this caller's own reserve": 'reserve',
  'admitted from the shared spare': 'spare',
  'admitted from the shared bucket': 'bucket',
}

/** The caller of one request, from the AuthInfo the HTTP layer attached after the audience check. */
export function callerOf(ctx: ServerContext): Caller {
  const auth = ctx.http?.authInfo
  return { id: auth?.clientId ?? '', scopes: auth?.scopes ?? [] }
}

/**
 * Builds an SDK server. The caller is read from each request's context, never fixed at construction, so one
 * server may serve a whole legacy session whose token is re-verified on every request. Cheap: the tool table is
 * compiled once, outside.
 */
export function buildGateServer(options: {
  serverInfo: { name: string; version: string }
  instructions: string | undefined
  table: ToolTable
  budget: Budget
  onFault: FaultReporter
  onCall?: (report: CallReport) => void
}): GateServer {
  const { table, budget, onFault, onCall } = options
  // What the budget said for each request (where the unit came from, what was left), kept until the call is reported.
  const charged = new WeakMap<JSONRPCRequest, CallReport['charged']>()
  const leftAfter = new WeakMap<JSONRPCRequest, CallReport['left']>()
  const server = new GateServer(options.serverInfo, {
    capabilities: { tools: { listChanged: false } },
    ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
    // The listing depends on the caller's grants, so no shared cache may hold it.
    cacheHints: { 'tools/list': { ttlMs: 0, cacheScope: 'private' } },
  })
  // Outcomes the answer alone cannot tell apart: a caller with no reserve and one whose share is spent get the same
  // text (concealment), and an abandoned call is never answered.
  const unknownCaller = new WeakSet<JSONRPCRequest>()
  const abandoned = new WeakSet<JSONRPCRequest>()
  server.gate = async (request, ctx, scope) => {
    const caller = callerOf(ctx)
    // A client that has gone (it gave up while this call waited for its turn) is not charged after the fact.
    if (scope?.gone() === true) {
      abandoned.add(request)
      return refusal(OVER_BUDGET)
    }
    const startedMs = performance.now()
    let decision: Awaited<ReturnType<Budget['request']>>
    try {
      decision = await budget.request(caller.id)
    } catch (error) {
      // Fail closed: nothing served, nothing run. The fault goes to the log; the caller gets a 503 with Retry-After
      // (the scope's flag) carrying only the fixed text.
      onFault('budget-store', undefined, error)
      if (scope !== undefined) scope.budgetUnavailable = true
      onCall?.({
        caller: caller.id,
        tool: undefined,
        outcome: 'unavailable',
        charged: undefined,
        left: undefined,
        durationMs: performance.now() - startedMs,
      })
      throw new BudgetUnavailable()
    }
    if (decision.left !== undefined) leftAfter.set(request, decision.left)
    if (!decision.admitted) {
      if (decision.reason === 'no reserve is held for this caller') unknownCaller.add(request)
      return refusal(OVER_BUDGET)
    }
    charged.set(request, CHARGED_FROM[decision.reason])
    const params = request.params as { name?: unknown } | undefined
    return table.granted(params?.name, caller.scopes) === undefined ? refusal(NO_SUCH_TOOL) : undefined
  }
  if (onCall !== undefined) {
    server.report = (request, ctx, result, startedMs) => {
      const caller = callerOf(ctx)
      const text = (result as CallToolResult).content?.[0]
      const refusedWith = text?.type === 'text' ? text.text : undefined
      const from = charged.get(request)
      const outcome: CallReport['outcome'] =
        from === undefined
          ? abandoned.has(request)
            ? 'abandoned'
            : unknownCaller.has(request)
              ? 'unknown-caller'
              : 'over-budget'
          : (result as CallToolResult).isError !== true
            ? 'served'
            : refusedWith === NO_SUCH_TOOL
              ? 'no-such-tool'
              : 'refused'
      onCall({
        caller: caller.id,
        tool: table.granted((request.params as { name?: unknown } | undefined)?.name, caller.scopes)?.tool.name,
        outcome,
        charged: from,
        left: leftAfter.get(request),
        durationMs: performance.now() - startedMs,
      })
    }
  }
  server.setRequestHandler('tools/list', async (_request, ctx) => ({
    tools: table.visibleTo(callerOf(ctx).scopes).map(({ tool }) => ({
      name: tool.name,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as { type: 'object' } } : {}),
    })),
  }))
  server.serveGranted = async (request, ctx) => {
    // The gate has already charged and admitted this name; the lookup cannot miss, but stays total.
    const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown }
    const compiled = table.granted(params.name, callerOf(ctx).scopes)
    if (compiled === undefined) return { result: refusal(NO_SUCH_TOOL) }
    const args = params.arguments ?? {}
    if (!compiled.validateInput(args))
      return { result: refusal(`invalid arguments: ${describeSchemaErrors(compiled.validateInput)}`) }
    let outcome: Awaited<ReturnType<CompiledTool['tool']['call']>>
    try {
      outcome = await compiled.tool.call(args)
    } catch (error) {
      onFault('tool-threw', compiled.tool.name, error)
      return { result: refusal("the tool failed on the server; this is not the caller's fault") }
    }
    if (!outcome.ok) return { result: refusal(outcome.text) }
    if (compiled.validateOutput && !compiled.validateOutput(outcome.structuredContent)) {
      onFault('output-schema', compiled.tool.name)
      return { result: refusal("the tool failed on the server; this is not the caller's fault") }
    }
    return {
      result: { content: [{ type: 'text', text: outcome.text }], structuredContent: outcome.structuredContent },
      answer: outcome,
    }
  }
  const serveGranted = server.serveGranted
  server.setRequestHandler('tools/call', async (request, ctx) => (await serveGranted(request, ctx)).result)
  return server
}
