// One server for the benches, in its own process (the load client runs in another): either the bare per-request
// SDK v2 peer with one no-op tool, or quenchz (whole gate + rates core on the ECB history file).
// Prints one JSON line {url, tokens} on stdout once listening; stops on SIGTERM.
// quenchz-admin is quenchz with its metrics counted and served on an admin port of its own (the CLI's --admin-port); the
// JSON line then also carries `admin` (its URL).
// Usage: node --conditions=@tollgate/source --import tsx bench/support/serve.ts bare|quenchz|quenchz-admin|quenchz-unscheduled HISTORY
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { toNodeHandler } from '@modelcontextprotocol/node'
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server'
import { createAudience, createInProcessIssuer, FairBudget, FairScheduler } from '@tollgate/gate'
import { Health, startAdminServer } from '@tollgate/operability'
import { createRatesTools, openSource } from '../../src/rates/index.js'
import { ISSUER, RESOURCE } from '../../src/server/constants.js'
import { createQuenchzMetrics } from '../../src/server/metrics.js'
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
  const metrics = kind === 'quenchz-admin' ? createQuenchzMetrics({ namedCallers: CALLERS }) : undefined
  // Both quenchz kinds answer /livez and /readyz on the main port, as the CLI does; only the admin kind counts metrics.
  const health = new Health()
  const source = await openSource({ kind: 'history', file: history as string }, metrics?.upstream)
  const issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
  const running = await startQuenchz({
    tools: createRatesTools({ source }),
    audience: createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] }),
    port: 0,
    // A budget that never runs out, so the benches measure the charge and the service, not refusals.
    budget: new FairBudget({ capacity: 1e12, refillPerSecond: 1e12, callers: CALLERS }),
    // BENCH_PER_CALLER sets the scheduler's perCaller (quenchz's --max-in-flight); default the scheduler's own.
    health,
    ...(metrics !== undefined && { metrics }),
    ...(kind === 'quenchz' || kind === 'quenchz-admin'
      ? {
          scheduler: new FairScheduler(
            process.env.BENCH_PER_CALLER ? { perCaller: Number(process.env.BENCH_PER_CALLER) } : {},
          ),
        }
      : {}),
  })
  const tokens: Record<string, string> = {}
  for (const sub of CALLERS)
    tokens[sub] = await issuer.mint({ subject: sub, scopes: ['rates:read'], lifetimeSeconds: 7200 })
  // The quiet caller's time inside this server: from the request's headers being parsed to its answer's last byte
  // handed to the socket; and before that, from the client's `x-bench-sent-at` stamp (the machine's clock) to the
  // `request` event: the time the request spent in the client, the kernel and this server's queue of unread sockets.
  // On SIGUSR2, one JSON line {inServerMs, arrivalMs, cpuPerWall, loopDelayMaxMs, loopDelayP99Ms} since the last
  // SIGUSR2, then reset: the fairness bench uses it to tell the server's share of a delay from the machine's (the
  // process not on a CPU), and to see how long the server's own event loop went without turning.
  const quiet = `Bearer ${tokens['agent-beta']}`
  let inServerMs: number[] = []
  let arrivalMs: number[] = []
  let cpu = process.cpuUsage()
  let wall = performance.now()
  const loopDelay = monitorEventLoopDelay({ resolution: 1 })
  loopDelay.enable()
  running.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.authorization !== quiet) return
    const t0 = performance.now()
    const sentAt = Number(req.headers['x-bench-sent-at'])
    if (Number.isFinite(sentAt)) arrivalMs.push(performance.timeOrigin + t0 - sentAt)
    res.once('finish', () => inServerMs.push(performance.now() - t0))
  })
  process.on('SIGUSR2', () => {
    const used = process.cpuUsage(cpu)
    const cpuPerWall = (used.user + used.system) / 1000 / (performance.now() - wall)
    const loopDelayMaxMs = loopDelay.max / 1e6
    const loopDelayP99Ms = loopDelay.percentile(99) / 1e6
    console.log(JSON.stringify({ inServerMs, arrivalMs, cpuPerWall, loopDelayMaxMs, loopDelayP99Ms }))
    loopDelay.reset()
    inServerMs = []
    arrivalMs = []
    cpu = process.cpuUsage()
    wall = performance.now()
  })
  const admin =
    metrics === undefined ? undefined : await startAdminServer({ port: 0, registry: metrics.registry, health })
  console.log(JSON.stringify({ url: running.url, tokens, ...(admin !== undefined && { admin: admin.url }) }))
  process.once('SIGTERM', () => void running.close().then(() => process.exit(0)))
}
