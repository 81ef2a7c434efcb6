// Fast path for the one request the platform sends most: a well-formed 2026-07-28 tools/call. It runs behind the
// door (@tollgate/mcp-endpoint): the body is already admitted and parsed once, strictly, so it never parses. It
// answers exactly what the SDK's stateless modern leg answers for it (same validation through the same compiled
// schemas, same result shape, resultType and serverInfo) without building an McpServer per request. Anything else
// — another method, a header or envelope problem, an unknown tool, MRTR fields — returns false untouched and the
// SDK answers it from the same parsed message, so every error reply stays the SDK's own.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AdmittedMessage } from '@tollgate/mcp-endpoint'
import { runTool, SERVER_INFO, type ServerContext } from '../mcp/create-server.js'
import type { ToolEntry } from '../mcp/tool-table.js'

const MODERN = '2026-07-28'
const PROTOCOL_META = 'io.modelcontextprotocol/protocolVersion'
const CAPS_META = 'io.modelcontextprotocol/clientCapabilities'
const SERVER_META = { 'io.modelcontextprotocol/serverInfo': SERVER_INFO }
const PARAMS_KEYS = new Set(['name', 'arguments', '_meta'])
const TOP_KEYS = new Set(['jsonrpc', 'id', 'method', 'params'])

type Plain = Record<string, unknown>
const isObject = (v: unknown): v is Plain => v !== null && typeof v === 'object' && !Array.isArray(v)

export function createModernFastPath(ctx: ServerContext) {
  const byName = new Map<string, ToolEntry>(ctx.tools.map((t) => [t.tool.name, t]))
  return async ({ req, message: msg }: AdmittedMessage, res: ServerResponse): Promise<boolean> => {
    const h = req.headers
    if (h['mcp-method'] !== 'tools/call' || h['mcp-protocol-version'] !== MODERN) return false
    const name = h['mcp-name']
    const type = h['content-type']
    if (typeof name !== 'string' || typeof type !== 'string' || !type.toLowerCase().startsWith('application/json'))
      return false
    const entry = byName.get(name)
    if (entry === undefined) return false
    if (!isObject(msg) || msg.jsonrpc !== '2.0' || msg.method !== 'tools/call') return false
    if (Object.keys(msg).some((k) => !TOP_KEYS.has(k))) return false
    const id = msg.id
    if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return false
    const params = msg.params
    if (!isObject(params) || params.name !== name || Object.keys(params).some((k) => !PARAMS_KEYS.has(k))) return false
    const meta = params._meta
    if (!isObject(meta) || meta[PROTOCOL_META] !== MODERN || !isObject(meta[CAPS_META])) return false
    // progressToken / logLevel ask for notifications: leave those to the SDK.
    if ('progressToken' in meta || 'io.modelcontextprotocol/logLevel' in meta) return false
    const args = params.arguments === undefined ? {} : params.arguments
    if (!isObject(args)) return false

    const result = await callValidated(ctx, entry, name, args, meta)
    const body = JSON.stringify({
      result: { ...result, resultType: 'complete', _meta: SERVER_META },
      jsonrpc: '2.0',
      id,
    })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
    return true
  }
}

/** Runs the tool and checks its output as the SDK's McpServer does (same schema, same error text). */
async function callValidated(
  ctx: ServerContext,
  entry: ToolEntry,
  name: string,
  args: Plain,
  meta: Plain | undefined,
): Promise<Plain> {
  const result: Plain = await runTool(ctx, entry, args, meta)
  if (result.isError === true) return result
  const output = await entry.outputSchema['~standard'].validate(result.structuredContent)
  if (output.issues === undefined) return result
  const why = output.issues.map((i) => i.message).join(', ')
  return {
    content: [{ type: 'text', text: `Output validation error: Invalid structured content for tool ${name}: ${why}` }],
    isError: true,
  }
}

// The 2025-era protocol versions the SDK's legacy transport accepts in MCP-Protocol-Version.
const LEGACY_VERSIONS = new Set(['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'])

/**
 * The same fast path for a 2025-era session's tools/call (after LegacySessions verified the session): it answers
 * what the SDK's stateless transport and a fresh McpServer answer (JSON, no resultType), without building them.
 * Anything the SDK would judge differently (Accept, Content-Type, an unknown version, progress, an unknown tool)
 * returns false untouched.
 */
export function createLegacyFastPath(ctx: ServerContext) {
  const byName = new Map<string, ToolEntry>(ctx.tools.map((t) => [t.tool.name, t]))
  return async (msg: unknown, req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const h = req.headers
    const type = h['content-type']
    const accept = h.accept
    if (typeof type !== 'string' || !type.toLowerCase().startsWith('application/json')) return false
    if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream'))
      return false
    const version = h['mcp-protocol-version']
    if (version !== undefined && (typeof version !== 'string' || !LEGACY_VERSIONS.has(version))) return false
    if (!isObject(msg) || msg.jsonrpc !== '2.0' || msg.method !== 'tools/call') return false
    if (Object.keys(msg).some((k) => !TOP_KEYS.has(k))) return false
    const id = msg.id
    if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return false
    const params = msg.params
    if (!isObject(params) || Object.keys(params).some((k) => !PARAMS_KEYS.has(k))) return false
    const name = params.name
    const entry = typeof name === 'string' ? byName.get(name) : undefined
    if (entry === undefined || typeof name !== 'string') return false
    const meta = params._meta
    if (meta !== undefined && (!isObject(meta) || 'progressToken' in meta)) return false
    const args = params.arguments === undefined ? {} : params.arguments
    if (!isObject(args)) return false
    const result = await callValidated(ctx, entry, name, args, meta)
    const body = JSON.stringify({ result, jsonrpc: '2.0', id })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
    return true
  }
}
