// The bench's server process: a small MCP server behind the door with default limits. Prints "READY <port>".
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server'
import { createLimitedServer, createMcpEndpoint, LegacySessions } from '../src/index.ts'

const build = () => {
  const server = new McpServer({ name: 'door-bench', version: '0.0.1' })
  server.registerTool('noop', { description: 'does nothing' }, async () => ({
    content: [{ type: 'text', text: 'ok' }],
  }))
  return server
}
const endpoint = createMcpEndpoint({
  path: '/mcp',
  modern: toNodeHandler(createMcpHandler(build, { legacy: 'reject' })),
  legacy: new LegacySessions({ createServer: build }),
})
const server = createLimitedServer((req, res) => void endpoint.handle(req, res))
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`READY ${typeof address === 'object' && address !== null ? address.port : 0}\n`)
})
process.once('SIGINT', () => process.exit(0))
