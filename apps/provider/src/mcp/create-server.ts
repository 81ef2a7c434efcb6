// One McpServer with the listed profile tools. Registration only wires pre-built schema wrappers (tool-table.ts).
import { McpServer } from '@modelcontextprotocol/server'
import { contractFaults, contractRef } from '@tollgate/contract'
import type { Logger } from 'pino'
import { StoreError } from '../errors.js'
import type { ProviderMetrics } from '../metrics.js'
import { outageAnswer, type ToolAnswer } from '../rules/answers.js'
import type { ProviderRules } from '../rules/provider-rules.js'
import type { ToolEntry } from './tool-table.js'

export const SERVER_INFO = { name: 'tollgate-provider', version: '0.1.0' }

const META_PREFIX = 'dev.supportroute/'
const META_FIELDS = ['request_id', 'correlation_id', 'channel', 'external_ticket'] as const

/** The platform's correlation ids from a call's _meta, for logs (strings only, length-capped). */
export function correlationOf(meta: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  if (meta === undefined) return out
  for (const field of META_FIELDS) {
    const v = meta[META_PREFIX + field]
    if (typeof v === 'string') out[field] = v.slice(0, 200)
  }
  return out
}

export interface ServerContext {
  rules: ProviderRules
  tools: readonly ToolEntry[]
  logger: Logger | undefined
  /** Logged with each call: the MCP era, or 'rest' for the REST binding. */
  era: 'legacy' | 'modern' | 'rest'
  /** Counts each call by era, tool and outcome, and its duration (the admin port's /metrics). */
  metrics?: ProviderMetrics | undefined
  /**
   * Sandbox: an internal_error for an object that fails its schema names the schema paths in its message
   * (`transaction.settlement: required`), so the merchant's kit run shows them. Production: only the log does.
   */
  namesFaultPaths?: boolean
}

/** A result from an answer: structuredContent plus its text copy; isError carries the error envelope. */
export function toolResult(answer: ToolAnswer) {
  const text = JSON.stringify(answer.body)
  return {
    content: [{ type: 'text' as const, text }],
    structuredContent: answer.body as Record<string, unknown>,
    isError: !answer.ok,
  }
}

/** Runs one tool call as an MCP result (structuredContent, text copy, isError). */
export async function runTool(
  ctx: ServerContext,
  entry: ToolEntry,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
) {
  return toolResult(await answerTool(ctx, entry, args, meta))
}

/**
 * Runs one tool call for either binding: the contract's input check, the handler, its log line, and a server fault
 * mapped to internal_error (retryable). `meta` holds the correlation ids (MCP `_meta`, or REST headers mapped to it).
 */
export async function answerTool(
  ctx: ServerContext,
  entry: ToolEntry,
  args: Record<string, unknown>,
  meta: Record<string, unknown> | undefined,
): Promise<ToolAnswer> {
  const started = performance.now()
  let answer: ToolAnswer
  const input = entry.validateInput(args)
  try {
    answer = input.valid
      ? await entry.handler(ctx.rules, args)
      : {
          ok: false,
          body: {
            error: {
              code: 'invalid_request',
              message: `the arguments do not match ${entry.tool.inputRef}: ${input.errors}`,
              retryable: false,
            },
          },
        }
  } catch (error) {
    // An outage (the store or the database behind the port unreachable, frozen, full) is unavailable with
    // Retry-After; any other server fault is internal_error (retryable), never a client-fault code. The detail stays
    // in the log.
    answer = outageAnswer(error) ?? {
      ok: false,
      body: {
        error: { code: 'internal_error', message: 'the provider failed; retry with the same key', retryable: true },
      },
      fault: error,
    }
  }
  let fault: 'invalid_output' | 'exception' | 'outage' | undefined
  if (answer.ok && !entry.validateOutput(answer.body).valid) {
    // The billing port built an object its schema refuses: never sent as is, on any binding or path. The log names
    // the schema paths (never the values); a sandbox answer names them too, so a kit run shows the merchant.
    fault = 'invalid_output'
    const paths = contractFaults(entry.tool.outputRef, answer.body)
    ctx.logger?.error(
      {
        tool: entry.tool.name,
        era: ctx.era,
        ...correlationOf(meta),
        fault,
        schema: contractRef(entry.tool.outputRef),
        errors: paths,
      },
      'tool answer failed its schema',
    )
    const message =
      ctx.namesFaultPaths === true
        ? `the provider built an answer its schema refuses: ${paths.join('; ')}`
        : 'the provider built an invalid answer'
    answer = { ok: false, body: { error: { code: 'internal_error', message, retryable: true } } }
  } else if (!answer.ok && answer.fault instanceof StoreError && answer.fault.health !== undefined) {
    // A store outage is logged once, by its first caller ('store unavailable', with the error's class and code), and
    // once more when a store call succeeds again — not once per request for as long as it lasts.
    fault = 'outage'
    answer.fault.health.announce(ctx.logger)
  } else if (!answer.ok && answer.fault !== undefined) {
    fault = 'exception'
    ctx.logger?.error(
      { tool: entry.tool.name, era: ctx.era, ...correlationOf(meta), fault, exception: errorFacts(answer.fault) },
      'tool failed',
    )
  }
  const ms = performance.now() - started
  ctx.metrics?.calls(ctx.era, entry.tool.name).record(answer, ms / 1000)
  ctx.logger?.info(
    {
      tool: entry.tool.name,
      era: ctx.era,
      ...correlationOf(meta),
      outcome: answer.ok ? String(answer.body.status ?? 'ok') : (answer.body as { error: { code: string } }).error.code,
      ...(fault !== undefined && { fault }),
      ms: Math.round(ms * 10) / 10,
    },
    'tool call',
  )
  return answer
}

export function createServer(ctx: ServerContext): McpServer {
  const server = new McpServer(SERVER_INFO, {
    // A static list: the tool set is fixed at start from sr_describe's capabilities.
    capabilities: { tools: { listChanged: false } },
    cacheHints: {
      'tools/list': { ttlMs: 300_000, cacheScope: 'public' },
      'server/discover': { ttlMs: 300_000, cacheScope: 'public' },
    },
  })
  for (const entry of ctx.tools) {
    server.registerTool(
      entry.tool.name,
      { description: entry.description, inputSchema: entry.inputSchema, outputSchema: entry.outputSchema },
      async (args, extra) =>
        runTool(
          ctx,
          entry,
          args as Record<string, unknown>,
          (extra as { mcpReq?: { _meta?: Record<string, unknown> } }).mcpReq?._meta,
        ),
    )
  }
  return server
}

/**
 * What a thrown error says about itself, for the log: its class, code, message and stack (a merchant's port error is
 * the merchant's own text). Not pino's `err` serializer, which would also copy every enumerable property (a database
 * error's `detail` can quote row values); the call's arguments are never added.
 */
function errorFacts(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { type: typeof error }
  const code = (error as { code?: unknown }).code
  return {
    type: error.constructor.name,
    ...(typeof code === 'string' && { code }),
    message: error.message,
    ...(error.stack !== undefined && { stack: error.stack }),
  }
}
