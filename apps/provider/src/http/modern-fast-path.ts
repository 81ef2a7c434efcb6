// Fast path for the one request the platform sends most: a well-formed 2026-07-28 tools/call. It runs behind the
// door (@tollgate/mcp-endpoint): the body is already admitted and parsed once, strictly, so it never parses. It
// answers exactly what the SDK's stateless modern leg answers for it (same validation through the same compiled
// schemas, same result shape, resultType and serverInfo) without building an McpServer per request. Anything else
// — another method, a header or envelope problem, an unknown tool, MRTR fields — returns false untouched and the
// SDK answers it from the same parsed message, so every error reply stays the SDK's own.
import type { ServerResponse } from 'node:http'
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

    let result: Plain = await runTool(ctx, entry, args, meta)
    if (result.isError !== true) {
      const output = await entry.outputSchema['~standard'].validate(result.structuredContent)
      if (output.issues !== undefined) {
        const why = output.issues.map((i) => i.message).join(', ')
        result = {
          content: [
            { type: 'text', text: `Output validation error: Invalid structured content for tool ${name}: ${why}` },
          ],
          isError: true,
        }
      }
    }
    const body = JSON.stringify({
      result: { ...result, resultType: 'complete', _meta: SERVER_META },
      jsonrpc: '2.0',
      id,
    })
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
    return true
  }
}
