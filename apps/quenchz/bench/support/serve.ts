// One server for the benches, in its own process (the load client runs in another): either the bare per-request
// SDK v2 peer with one no-op tool, or quenchz (whole gate + rates core on the ECB history file).
// Prints one JSON line {url, tokens} on stdout once listening; stops on SIGTERM.
// Usage: node --conditions=@tollgate/source --import tsx bench/support/serve.ts bare|quenchz|quenchz-unscheduled HISTORY
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server'
import { createAudience, createInProcessIssuer, FairBudget, FairScheduler } from '@tollgate/gate'
import { createRatesTools, openSource } from '../../src/rates/index.js'
import { ISSUER, RESOURCE } from '../../src/server/constants.js'
import { startQuenchz } from '../../src/server/start-quenchz.js'

const [kind, history] = process.argv.slice(2)
const CALLERS = ['agent-alpha', 'agent-beta']

if (kind === 'bare') {
  // The baseline: what the SDK costs with nothing in front of it, a fresh server per request.
  const noop = fromJsonSchema<{ currency: string; start: string; end: string }>({
    type: 'object',
    properties: { currency: { type: 'string' }, start: { type: 'string' }, end: { type: 'string' } },
  })
  const handler = toNodeHandler(
    createMcpHandler(() => {
      const server = new McpServer({ name: 'bare', version: '0.0.0' })
      server.registerTool('rates.window', { description: 'no-op', inputSchema: noop }, async () => ({
        content: [{ type: 'text', text: '{}' }],
      }))
      return server
    }),
  )
  const server = createServer((req, res) => void handler(req as Parameters<typeof handler>[0], res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const port = (server.address() as AddressInfo).port
  console.log(JSON.stringify({ url: `http://127.0.0.1:${port}/mcp`, tokens: {} }))
  process.once('SIGTERM', () => process.exit(0))
} else {
  const source = await openSource({ kind: 'history', file: history as string })
  const issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
  const running = await startQuenchz({
    tools: createRatesTools({ source }),
    audience: createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] }),
    port: 0,
    // A budget that never runs out, so the benches measure the charge and the service, not refusals.
    budget: new FairBudget({ capacity: 1e12, refillPerSecond: 1e12, callers: CALLERS }),
    ...(kind === 'quenchz' ? { scheduler: new FairScheduler() } : {}),
  })
  const tokens: Record<string, string> = {}
  for (const sub of CALLERS)
    tokens[sub] = await issuer.mint({ subject: sub, scopes: ['rates:read'], lifetimeSeconds: 7200 })
  console.log(JSON.stringify({ url: running.url, tokens }))
  process.once('SIGTERM', () => void running.close().then(() => process.exit(0)))
}
