// Fast path for the one request the platform sends most: a well-formed 2026-07-28 tools/call. It runs behind the
// door (@tollgate/mcp-endpoint): the body is already admitted and parsed once, strictly, so it never parses. It
// answers exactly what the SDK's stateless modern leg answers for it (same validation through the same compiled
// schemas, same result shape, resultType and serverInfo) without building an McpServer per request. Anything else
// — another method, a header or envelope problem, an unknown tool, MRTR fields — returns false untouched and the
// SDK answers it from the same parsed message, so every error reply stays the SDK's own.
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  type AdmittedMessage,
  legacyToolCall,
  modernResultTail,
  openResultJson,
  writeToolResult,
} from '@tollgate/mcp-endpoint'
import { answerTool, SERVER_INFO, type ServerContext, toolResult } from '../mcp/create-server.js'
import type { ToolEntry } from '../mcp/tool-table.js'

const SERVER_TAIL = modernResultTail(SERVER_INFO)

type Plain = Record<string, unknown>

export function createModernFastPath(ctx: ServerContext) {
  const byName = new Map<string, ToolEntry>(ctx.tools.map((t) => [t.tool.name, t]))
  return async ({ plainCall: call }: AdmittedMessage, res: ServerResponse): Promise<boolean> => {
    const entry = call === undefined ? undefined : byName.get(call.name)
    if (call === undefined || entry === undefined) return false
    const result = await callValidated(ctx, entry, call.name, call.args, call.meta, res)
    writeToolResult(res, call.id, openResultJson(result), SERVER_TAIL)
    return true
  }
}

/**
 * Runs the tool and checks its output as the SDK's McpServer does (same schema, same error text). An outage's result
 * (`unavailable`) also sets Retry-After on `res`: the JSON-RPC answer stays a 200 carrying the tool's error envelope,
 * as the SDK path answers it, but a client or proxy reading HTTP headers learns when to come back.
 */
async function callValidated(
  ctx: ServerContext,
  entry: ToolEntry,
  name: string,
  args: Plain,
  meta: Plain | undefined,
  res: ServerResponse,
): Promise<Plain> {
  const answer = await answerTool(ctx, entry, args, meta)
  if (!answer.ok && answer.retryAfterSeconds !== undefined)
    res.setHeader('retry-after', String(answer.retryAfterSeconds))
  const result: Plain = toolResult(answer)
  if (result.isError === true) return result
  const output = await entry.outputSchema['~standard'].validate(result.structuredContent)
  if (output.issues === undefined) return result
  const why = output.issues.map((i) => i.message).join(', ')
  return {
    content: [{ type: 'text', text: `Output validation error: Invalid structured content for tool ${name}: ${why}` }],
    isError: true,
  }
}

/**
 * The same fast path for a 2025-era session's tools/call (after LegacySessions verified the session): it answers
 * what the SDK's stateless transport and a fresh McpServer answer (JSON, no resultType), without building them.
 * Anything the SDK would judge differently (Accept, Content-Type, an unknown version, progress, an unknown tool)
 * returns false untouched.
 */
export function createLegacyFastPath(ctx: ServerContext) {
  const byName = new Map<string, ToolEntry>(ctx.tools.map((t) => [t.tool.name, t]))
  return async (message: unknown, req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const call = legacyToolCall(message, req.headers)
    const entry = call === undefined ? undefined : byName.get(call.name)
    if (call === undefined || entry === undefined) return false
    const result = await callValidated(ctx, entry, call.name, call.args, call.meta, res)
    writeToolResult(res, call.id, openResultJson(result), '')
    return true
  }
}
