import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import type { BudgetLeft } from './budget/fair-budget.js'
import { GateConfigError } from './errors.js'

/** What a tool handler answers: data (as structuredContent plus a text copy) or a caller-facing refusal text. */
export type GatedToolAnswer =
  | {
      ok: true
      structuredContent: Record<string, unknown>
      text: string
      /**
       * true: this very object is the answer to the same question for good (a settled window of a dated file), and
       * is returned again, never mutated. The gate may then keep its serialised form (bounded) and splice it into
       * every later reply instead of serialising it again.
       */
      settled?: boolean
    }
  | { ok: false; text: string }

/** A tool the gate serves. Tools never charge the budget and never check scope: the gate does both, once. */
export interface GatedTool {
  name: string
  /** The one scope that grants this tool. */
  scope: string
  title?: string
  description: string
  /** JSON Schema 2020-12 with `type: "object"` at the root; no external `$ref`. */
  inputSchema: Record<string, unknown>
  /** JSON Schema 2020-12 the structuredContent always satisfies. */
  outputSchema?: Record<string, unknown>
  call(args: unknown): Promise<GatedToolAnswer>
}

/** The refusal for an unknown name and for an ungranted one alike. Nothing is ever interpolated into it. */
export const NO_SUCH_TOOL = 'no tool by that name is available to this caller'

/** The refusal once a caller's share of the budget is spent, whatever the name asked for. */
export const OVER_BUDGET = 'this caller has spent its share of the upstream budget'

/** Seconds a caller refused because the budget store could not be reached is told to wait (HTTP Retry-After). */
export const BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS = 1

/**
 * The JSON-RPC error of a call the budget store could not charge, the same on every path: answered with HTTP 503 and
 * `Retry-After`, so MCP clients and the proxies between see an outage, not a tool's error.
 */
export const BUDGET_UNAVAILABLE_ERROR = {
  code: -32000,
  message: 'the budget store could not be reached',
  data: { reason: 'budget-unavailable', retryAfterSeconds: BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS },
} as const

/** One finished tools/call, for the log. `tool` is set only for a name the caller was granted (never raw input). */
export interface CallReport {
  caller: string
  tool: string | undefined
  /**
   * `over-budget`: the caller's reserve and the pool are spent; `unknown-caller`: the budget holds no reserve for
   * this caller (a policy that serves listed callers only, or no `sub`); both are answered the same over-budget text.
   * `unavailable`: the budget store could not charge (answered 503, not run); `abandoned`: the client had gone before
   * the charge (nothing charged, nothing answered).
   */
  outcome: 'served' | 'refused' | 'over-budget' | 'unknown-caller' | 'no-such-tool' | 'unavailable' | 'abandoned'
  /** Where the budget unit came from; undefined when the budget refused. */
  charged: 'reserve' | 'spare' | 'bucket' | undefined
  /** What the budget had left right after this call's charge; undefined when nothing was charged or read. */
  left: BudgetLeft | undefined
  durationMs: number
}

/** Tool descriptions with their validators compiled once, at gate creation. */
export interface ToolTable {
  /** Tools granted by at least one of `scopes`, sorted by name (a deterministic listing). */
  visibleTo(scopes: readonly string[]): CompiledTool[]
  /** The tool, only when `name` is a string naming a tool one of `scopes` grants; otherwise undefined. */
  granted(name: unknown, scopes: readonly string[]): CompiledTool | undefined
}

export interface CompiledTool {
  tool: GatedTool
  validateInput: ValidateFunction
  validateOutput: ValidateFunction | undefined
}

/** Compiles the tool list. Throws GateConfigError on duplicate names or schemas that do not compile. */
export function toolTable(tools: readonly GatedTool[]): ToolTable {
  // validateFormats off: formats are advisory here; the tools check their own values and word their own errors.
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false })
  // Map, not object: tool names come from requests and must not reach Object.prototype.
  const byName = new Map<string, CompiledTool>()
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new GateConfigError('two tools share one name')
    if (tool.inputSchema.type !== 'object')
      throw new GateConfigError('a tool input schema must have type "object" at its root')
    try {
      byName.set(tool.name, {
        tool,
        validateInput: ajv.compile(tool.inputSchema),
        validateOutput: tool.outputSchema ? rememberingValid(ajv.compile(tool.outputSchema)) : undefined,
      })
    } catch (error) {
      throw new GateConfigError(`a tool schema does not compile: ${(error as Error).message}`)
    }
  }
  const sorted = [...byName.values()].sort((a, b) =>
    a.tool.name < b.tool.name ? -1 : a.tool.name > b.tool.name ? 1 : 0,
  )
  return {
    visibleTo: (scopes) => sorted.filter((t) => scopes.includes(t.tool.scope)),
    granted(name, scopes) {
      if (typeof name !== 'string') return undefined
      const found = byName.get(name)
      return found !== undefined && scopes.includes(found.tool.scope) ? found : undefined
    },
  }
}

/**
 * A validator that remembers the objects it found valid, so a tool that answers with the very same object again
 * (a cached answer of thousands of observations) is not walked again on every call. Tools never mutate an outcome
 * after returning it; an object is remembered only while it is alive (WeakSet).
 */
function rememberingValid(validate: ValidateFunction): ValidateFunction {
  const valid = new WeakSet<object>()
  const remembering = (data: unknown) => {
    const isObject = typeof data === 'object' && data !== null
    if (isObject && valid.has(data)) return true
    const ok = validate(data)
    if (ok && isObject) valid.add(data)
    return ok
  }
  Object.defineProperty(remembering, 'errors', { get: () => validate.errors })
  return remembering as ValidateFunction
}

/** Describes validation failures by schema path only: no value the caller sent is repeated. */
export function describeSchemaErrors(validate: ValidateFunction): string {
  const first = validate.errors?.[0]
  if (first === undefined) return 'the arguments do not match the input schema'
  const at = first.instancePath === '' ? 'the arguments' : first.instancePath
  return `${at} ${first.message ?? 'is invalid'}`
}
