// rates.window calls per second at concurrency 16 through the whole quenchz stack (host guard, RS256 audience,
// budget, concealment, SDK v2, rates core on the ECB history file), as a ratio to a bare SDK v2 tool server
// (per-request createMcpHandler, one no-op tool, no gate) measured in the same run on loopback.
// Bounded: a fixed number of calls per phase. Run: npm run bench -w apps/quenchz

import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server'
import { createAudience, createInProcessIssuer, FairBudget } from '@tollgate/gate'
import { sharedDir } from '@tollgate/test-support'
import { createRatesTools, openSource } from '../src/rates/index.js'
import { ISSUER, RESOURCE } from '../src/server/constants.js'
import { startQuenchz } from '../src/server/start-quenchz.js'

const CONCURRENCY = 16
const CALLS_PER_PHASE = 800
const ROUNDS = 5

const _root = fileURLToPath(new URL('../../../', import.meta.url))
const history = join(sharedDir(), 'data', 'ecb', 'eurofxref-hist.zip')
if (!existsSync(history)) {
  console.log(`calls.bench: skipped, the ECB history file is absent (${history})`)
  process.exit(0)
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return (server.address() as AddressInfo).port
}

// The baseline: what the SDK costs with nothing in front of it.
const noop = fromJsonSchema<{ currency: string; start: string; end: string }>({
  type: 'object',
  properties: { currency: { type: 'string' }, start: { type: 'string' }, end: { type: 'string' } },
})
const bare = createMcpHandler(() => {
  const server = new McpServer({ name: 'bare', version: '0.0.0' })
  server.registerTool('rates.window', { description: 'no-op', inputSchema: noop }, async () => ({
    content: [{ type: 'text', text: '{}' }],
  }))
  return server
})
const bareNode = toNodeHandler(bare)
const bareServer = createServer((req, res) => void bareNode(req, res))
const barePort = await listen(bareServer)

const source = await openSource({ kind: 'history', file: history })
const issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
const quenchz = await startQuenchz({
  tools: createRatesTools({ source }),
  audience: createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] }),
  port: 0,
  // A budget that never runs out, so the bench measures the charge, not refusals.
  budget: new FairBudget({ capacity: 1e12, refillPerSecond: 1e12, callers: ['bench'] }),
})
const token = await issuer.mint({ subject: 'bench', scopes: ['rates:read'], lifetimeSeconds: 3600 })

async function clients(url: string, headers: Record<string, string>): Promise<Client[]> {
  return Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const c = new Client({ name: 'bench', version: '0' }, { versionNegotiation: { mode: 'auto' } })
      await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
      return c
    }),
  )
}

const args = { currency: 'USD', start: '2026-03-30', end: '2026-04-10' }

async function phase(cs: Client[]): Promise<number> {
  let next = 0
  const started = process.hrtime.bigint()
  await Promise.all(
    cs.map(async (c) => {
      while (next < CALLS_PER_PHASE) {
        next++
        const r = await c.callTool({ name: 'rates.window', arguments: args })
        if (r.isError) throw new Error('a bench call was refused')
      }
    }),
  )
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return CALLS_PER_PHASE / seconds
}

const bareClients = await clients(`http://127.0.0.1:${barePort}/mcp`, {})
const quenchzClients = await clients(quenchz.url, { authorization: `Bearer ${token}` })
await phase(bareClients)
await phase(quenchzClients)
// Alternating phases, and the median of per-round ratios: the machine is shared, so load drifts between rounds.
const bareRates: number[] = []
const quenchzRates: number[] = []
const ratios: number[] = []
for (let i = 0; i < ROUNDS; i++) {
  const bareRate = await phase(bareClients)
  const quenchzRate = await phase(quenchzClients)
  bareRates.push(bareRate)
  quenchzRates.push(quenchzRate)
  ratios.push(quenchzRate / bareRate)
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const b = median(bareRates)
const q = median(quenchzRates)
console.log(
  `calls.bench: concurrency ${CONCURRENCY}, ${CALLS_PER_PHASE} calls per phase, ${ROUNDS} rounds, loopback, SDK v2 client on 2026-07-28`,
)
console.log(`  bare SDK v2 tool server (no-op):     ${b.toFixed(0)} calls/s`)
console.log(`  quenchz rates.window (gate + core):  ${q.toFixed(0)} calls/s`)
console.log(
  `  ratio quenchz / bare (median of ${ROUNDS} alternating rounds): ${median(ratios).toFixed(2)}  [rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}]`,
)

for (const c of [...bareClients, ...quenchzClients]) await c.close()
await quenchz.close()
await bare.close()
bareServer.closeAllConnections()
await new Promise<void>((r) => bareServer.close(() => r()))
await source.close()
