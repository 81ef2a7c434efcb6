// A small MCP server behind the door, for the endpoint's own tests: one tool that counts its calls.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server'
import {
  type ConnectionLimits,
  createLimitedServer,
  createMcpEndpoint,
  type EndpointOptions,
  LegacySessions,
  type LegacySessionsOptions,
} from '../src/index.ts'

export interface Running {
  url: string
  port: number
  calls: { n: number }
  endpoint: ReturnType<typeof createMcpEndpoint>
  legacy: LegacySessions
  close(): Promise<void>
}

export async function startDoor(
  options: Partial<EndpointOptions> & {
    connections?: ConnectionLimits
    sessions?: Partial<LegacySessionsOptions>
  } = {},
): Promise<Running> {
  const calls = { n: 0 }
  const build = () => {
    const server = new McpServer({ name: 'door-test', version: '0.0.1' }, { capabilities: { tools: {} } })
    server.registerTool('count', { description: 'Counts.' }, async () => {
      calls.n++
      return { content: [{ type: 'text', text: String(calls.n) }] }
    })
    return server
  }
  const mcp = createMcpHandler(build, { legacy: 'reject' })
  const legacy = new LegacySessions({ createServer: build, ...options.sessions })
  const endpoint = createMcpEndpoint({ path: '/mcp', modern: toNodeHandler(mcp), legacy, ...options })
  const server: Server = createLimitedServer((req, res) => {
    endpoint.handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500)
      res.end()
    })
  }, options.connections)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    calls,
    endpoint,
    legacy,
    async close() {
      await legacy.close()
      await mcp.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
})

export async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  })
  return { status: res.status, session: res.headers.get('mcp-session-id'), text: await res.text() }
}
