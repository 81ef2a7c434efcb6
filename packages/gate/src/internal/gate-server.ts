import type { ServerResponse } from 'node:http'
import {
  type AuthInfo,
  type CallToolResult,
  type JSONRPCRequest,
  type Result,
  Server,
  type ServerContext,
} from '@modelcontextprotocol/server'
import type { ToolCallExchange } from '@tollgate/mcp-endpoint'
import {
  BUDGET_UNAVAILABLE_ERROR,
  BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS,
  NO_SUCH_TOOL,
  type ToolTable,
} from '../tools.js'
import {
  type CallOutcome,
  type CallPipelineOptions,
  chargeAndServe,
  refusal,
  type Served,
  serveTool,
  type ToolCallParams,
} from './call-pipeline.js'

type Handler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>

/**
 * The tools/call exchanges being served by the SDK, by the AuthInfo their admission made (one per HTTP request, and
 * the very object the SDK hands its handlers as `ctx.http.authInfo`): the charge reads whether the client is still
 * there, and asks for a 503 when the budget store could not charge.
 */
export type SdkExchanges = Map<AuthInfo, ToolCallExchange>

/** The client of a response has gone once its socket is destroyed (or was never there). */
export const hasGone = (res: ServerResponse): boolean => res.socket?.destroyed !== false

/** What the SDK turns into the JSON-RPC error of a call the budget store could not charge (numeric code, data). */
class BudgetUnavailable extends Error {
  readonly code = BUDGET_UNAVAILABLE_ERROR.code
  readonly data = BUDGET_UNAVAILABLE_ERROR.data
  constructor() {
    super(BUDGET_UNAVAILABLE_ERROR.message)
  }
}

const UNAVAILABLE_HEAD = {
  status: 503,
  headers: { 'retry-after': String(BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS) },
} as const

/** The SDK's own tools/call handling of an admitted, granted call: its param validation, then the handler. */
type SdkServeContext = { inner: Handler; request: JSONRPCRequest; ctx: ServerContext }
const serveThroughSdk = async (_tool: unknown, _params: ToolCallParams, sdk: SdkServeContext): Promise<Served> => ({
  result: (await sdk.inner(sdk.request, sdk.ctx)) as CallToolResult,
})

/** Everything a GateServer needs, given at construction. */
export interface GateServerOptions {
  serverInfo: { name: string; version: string }
  instructions: string | undefined
  pipeline: CallPipelineOptions
  exchanges: SdkExchanges
}

/**
 * The SDK's low-level Server with one interception point for `tools/call`, placed in the documented
 * `_wrapHandler` hook so it runs on the raw request before the SDK validates params or looks anything up: the
 * gate's pipeline charges the budget and refuses unknown and ungranted names with one constant, and only then hands
 * over to the SDK's own validation and the tool. `McpServer` has no such hook, hence `Server`. The caller is read
 * from each request's context, never fixed at construction, so one server may serve a whole legacy session whose
 * token is re-verified on every request.
 */
export class GateServer extends Server {
  readonly #pipeline: CallPipelineOptions
  readonly #exchanges: SdkExchanges

  constructor(options: GateServerOptions) {
    super(options.serverInfo, {
      capabilities: { tools: { listChanged: false } },
      ...(options.instructions !== undefined ? { instructions: options.instructions } : {}),
      // The listing depends on the caller's grants, so no shared cache may hold it.
      cacheHints: { 'tools/list': { ttlMs: 0, cacheScope: 'private' } },
    })
    this.#pipeline = options.pipeline
    this.#exchanges = options.exchanges
    const { table, onFault } = options.pipeline
    this.setRequestHandler('tools/list', async (_request, ctx) => ({ tools: listing(table, scopesOf(ctx)) }))
    this.setRequestHandler('tools/call', async (request, ctx) => {
      const params = (request.params ?? {}) as { name?: unknown; arguments?: unknown }
      // The pipeline has already charged and admitted this name; the lookup cannot miss, but stays total.
      const compiled = table.granted(params.name, scopesOf(ctx))
      if (compiled === undefined) return refusal(NO_SUCH_TOOL)
      return (await serveTool(compiled, params.arguments ?? {}, onFault)).result
    })
  }

  protected override _wrapHandler(method: string, handler: Handler): Handler {
    const inner = super._wrapHandler(method, handler)
    if (method !== 'tools/call') return inner
    return async (request, ctx) => {
      const authInfo = ctx.http?.authInfo
      const exchange = authInfo === undefined ? undefined : this.#exchanges.get(authInfo)
      const gone = exchange !== undefined && hasGone(exchange.res)
      const params = request.params as ToolCallParams
      const outcome = await chargeAndServe(this.#pipeline, authInfo, params, gone, serveThroughSdk, {
        inner,
        request,
        ctx,
      })
      return sdkAnswer(outcome, exchange)
    }
  }
}

/** The SDK's answer to an outcome: its result, or the budget store's error with the exchange's answer made a 503. */
function sdkAnswer(outcome: CallOutcome, exchange: ToolCallExchange | undefined): CallToolResult {
  if (outcome.kind !== 'unavailable') return outcome.result
  exchange?.replaceSuccessHead(UNAVAILABLE_HEAD)
  throw new BudgetUnavailable()
}

const scopesOf = (ctx: ServerContext): readonly string[] => ctx.http?.authInfo?.scopes ?? []

function listing(table: ToolTable, scopes: readonly string[]) {
  return table.visibleTo(scopes).map(({ tool }) => ({
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    description: tool.description,
    inputSchema: tool.inputSchema as { type: 'object' },
    ...(tool.outputSchema !== undefined ? { outputSchema: tool.outputSchema as { type: 'object' } } : {}),
  }))
}
