// The gate's one tools/call pipeline, the same on the fast path and inside the SDK: charge the budget first (every
// call, whatever the name), refuse unknown and ungranted names with one constant, then serve, and say what happened
// as one tagged outcome. The HTTP and MCP layers only map that outcome to an answer; the call report is made here.
import type { AuthInfo, CallToolResult } from '@modelcontextprotocol/server'
import type { Budget, BudgetDecision, BudgetLeft, ChargedFrom } from '../budget/fair-budget.js'
import {
  type CallReport,
  type CompiledTool,
  describeSchemaErrors,
  type GatedToolAnswer,
  NO_SUCH_TOOL,
  OVER_BUDGET,
  type ToolTable,
} from '../tools.js'

/** Reports a server-side fault; never given caller input (the tool name, when given, is the server's own). */
export type FaultReporter = (
  code: 'tool-threw' | 'output-schema' | 'budget-store',
  toolName: string | undefined,
  error?: unknown,
) => void

/** Why a charged or uncharged call was refused (the caller sees one of two constants, or the tool's own text). */
export type RefusalCode = 'over-budget' | 'unknown-caller' | 'no-such-tool' | 'tool'

/** What one tools/call came to. `charged` says whether a unit was taken, `from` where from, `left` what was left. */
export type CallOutcome =
  | {
      kind: 'served'
      result: CallToolResult
      answer: GatedToolAnswer | undefined
      tool: string
      charged: true
      from: ChargedFrom
      left: BudgetLeft | undefined
    }
  | {
      kind: 'refused'
      code: RefusalCode
      result: CallToolResult
      tool: string | undefined
      charged: boolean
      from: ChargedFrom | undefined
      left: BudgetLeft | undefined
    }
  /** The budget store could not charge: nothing run; answered 503 with Retry-After. */
  | { kind: 'unavailable'; charged: false; from: undefined; left: undefined }
  /** The client had gone before the charge: nothing charged, nothing run, nobody to answer. */
  | { kind: 'abandoned'; result: CallToolResult; charged: false; from: undefined; left: undefined }

/** A tool's result, and the tool's own answer when it gave one (the fast path keeps settled answers' bytes). */
export interface Served {
  result: CallToolResult
  answer?: GatedToolAnswer
}

/** Serves a call the budget admitted, on a name the caller is granted. */
export type ServeStep<Context> = (tool: CompiledTool, params: ToolCallParams, context: Context) => Promise<Served>

/** A tools/call's params as received (never trusted: the name and arguments are checked here). */
export type ToolCallParams = { name?: unknown; arguments?: unknown } | undefined

export const refusal = (text: string): CallToolResult => ({ content: [{ type: 'text', text }], isError: true })

const REPORTED: Record<CallOutcome['kind'] | RefusalCode, CallReport['outcome']> = {
  served: 'served',
  unavailable: 'unavailable',
  abandoned: 'abandoned',
  refused: 'refused',
  tool: 'refused',
  'over-budget': 'over-budget',
  'unknown-caller': 'unknown-caller',
  'no-such-tool': 'no-such-tool',
}

/** The pipeline's parts, fixed at gate creation. */
export interface CallPipelineOptions {
  table: ToolTable
  budget: Budget
  onFault: FaultReporter
  onCall: ((report: CallReport) => void) | undefined
}

/**
 * Charges one call and serves it with `serve` (given `context`), then reports it. A client already `gone` is not
 * charged after the fact. Throws only what `serve` throws (the SDK's own refusals of params, reported by nobody).
 */
export async function chargeAndServe<Context>(
  pipeline: CallPipelineOptions,
  authInfo: AuthInfo | undefined,
  params: ToolCallParams,
  gone: boolean,
  serve: ServeStep<Context>,
  context: Context,
): Promise<CallOutcome> {
  const startedMs = performance.now()
  const caller = authInfo?.clientId ?? ''
  // Looked up once, before anything is charged; only a granted name is ever reported (never raw input).
  const compiled = pipeline.table.granted(params?.name, authInfo?.scopes ?? [])
  const outcome = gone ? abandoned() : await charged(pipeline, caller, compiled, params, serve, context)
  pipeline.onCall?.({
    caller,
    tool: outcome.kind === 'unavailable' ? undefined : compiled?.tool.name,
    outcome: REPORTED[outcome.kind === 'refused' ? outcome.code : outcome.kind],
    charged: outcome.from,
    left: outcome.left,
    durationMs: performance.now() - startedMs,
  })
  return outcome
}

const abandoned = (): CallOutcome => ({
  kind: 'abandoned',
  result: refusal(OVER_BUDGET),
  charged: false,
  from: undefined,
  left: undefined,
})
const UNAVAILABLE: CallOutcome = Object.freeze({
  kind: 'unavailable',
  charged: false,
  from: undefined,
  left: undefined,
})

async function charged<Context>(
  { budget, onFault }: CallPipelineOptions,
  caller: string,
  compiled: CompiledTool | undefined,
  params: ToolCallParams,
  serve: ServeStep<Context>,
  context: Context,
): Promise<CallOutcome> {
  let decision: BudgetDecision
  try {
    decision = await budget.request(caller)
  } catch (error) {
    // Fail closed: nothing served, nothing run. The fault goes to the log; the caller gets the fixed text only.
    onFault('budget-store', undefined, error)
    return UNAVAILABLE
  }
  if (!decision.admitted) {
    // A caller with no reserve and one whose share is spent get the same text (concealment).
    const code = decision.refusal === 'no-reserve' ? 'unknown-caller' : 'over-budget'
    const result = refusal(OVER_BUDGET)
    const tool = compiled?.tool.name
    return { kind: 'refused', code, result, tool, charged: false, from: undefined, left: decision.left }
  }
  const { from, left } = decision
  if (compiled === undefined) {
    const result = refusal(NO_SUCH_TOOL)
    return { kind: 'refused', code: 'no-such-tool', result, tool: undefined, charged: true, from, left }
  }
  const { result, answer } = await serve(compiled, params, context)
  const tool = compiled.tool.name
  return result.isError === true
    ? { kind: 'refused', code: 'tool', result, tool, charged: true, from, left }
    : { kind: 'served', result, answer, tool, charged: true, from, left }
}

const SERVER_FAULT = "the tool failed on the server; this is not the caller's fault"

/** The tool's own work on a granted call: its input checked, the tool run, its output checked. */
export async function serveTool(compiled: CompiledTool, args: unknown, onFault: FaultReporter): Promise<Served> {
  if (!compiled.validateInput(args))
    return { result: refusal(`invalid arguments: ${describeSchemaErrors(compiled.validateInput)}`) }
  let outcome: GatedToolAnswer
  try {
    outcome = await compiled.tool.call(args)
  } catch (error) {
    onFault('tool-threw', compiled.tool.name, error)
    return { result: refusal(SERVER_FAULT) }
  }
  if (!outcome.ok) return { result: refusal(outcome.text) }
  if (compiled.validateOutput && !compiled.validateOutput(outcome.structuredContent)) {
    onFault('output-schema', compiled.tool.name)
    return { result: refusal(SERVER_FAULT) }
  }
  return {
    result: { content: [{ type: 'text', text: outcome.text }], structuredContent: outcome.structuredContent },
    answer: outcome,
  }
}
