// rates.window calls per second and p99 latency at concurrency 16 through the whole quenchz stack (host guard, RS256
// audience, budget, scheduler, concealment, SDK v2, rates core on the ECB history file), as ratios to the bare
// per-request SDK v2 server (one no-op tool, no gate) measured in the same run. Each server runs in its own process
// (pinned to one core when taskset exists); this process is the load client. Two windows: one month of USD, and
// the full USD history in the file. Bounded: a fixed number of calls per phase, alternating phases.
// Two load clients, in turn: the official SDK v2 client (what a caller pays, parsing included; for a large answer
// its parse costs more CPU than either server, so calls/s then measure the client), and a plain HTTP client sending
// the same request and reading the answer unparsed (so calls/s measure the servers). Each line also reports CPU per
// call of the server process and of this process.
// Run: npm run bench -w apps/quenchz

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { sharedDir } from '@tollgate/test-support'
import { plainCaller } from './support/plain-call.js'
import { type BenchServer, median, percentile, spawnServer } from './support/spawn-server.js'

const CONCURRENCY = 16
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

const history = join(sharedDir(), 'data', 'ecb', 'eurofxref-hist.zip')
if (!existsSync(history)) {
  console.log(`calls.bench: skipped, the ECB history file is absent (${history})`)
  process.exit(0)
}

/** The official SDK v2 client, one per caller: what a real caller pays, including parsing the answer. */
async function sdkCallers(
  server: BenchServer,
  token: string | undefined,
): Promise<{ calls: Call[]; close(): Promise<void> }> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
  const cs = await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const c = new Client({ name: 'bench', version: '0' }, { versionNegotiation: { mode: 'auto' } })
      await c.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }))
      return c
    }),
  )
  const calls = cs.map((c) => async (args: Record<string, string>) => {
    const r = await c.callTool({ name: 'rates.window', arguments: args })
    if (r.isError) throw new Error(`a bench call was refused: ${JSON.stringify(r.content).slice(0, 200)}`)
  })
  return { calls, close: async () => void (await Promise.all(cs.map((c) => c.close()))) }
}

/**
 * A plain HTTP load client (./support/plain-call.ts) sending the same 2026-07-28 request over keep-alive connections
 * and reading the whole answer without parsing it: it costs little per call, so its calls/s measure the servers.
 */
function plainCallers(server: BenchServer, token: string | undefined): { calls: Call[]; close(): Promise<void> } {
  const caller = plainCaller(server.url, token, CONCURRENCY)
  return { calls: Array.from({ length: CONCURRENCY }, () => caller.call), close: async () => caller.close() }
}

interface PhaseResult {
  rate: number
  p99: number
  /** CPU per call of the server process and of this (load client) process, ms; NaN where unknown. */
  serverCpu: number
  clientCpu: number
}

/** One of the 16 concurrent callers of a load client: makes one rates.window call, throws if it was refused. */
type Call = (args: Record<string, string>) => Promise<void>

async function phase(
  server: BenchServer,
  cs: readonly Call[],
  args: Record<string, string>,
  calls: number,
): Promise<PhaseResult> {
  let next = 0
  const latencies: number[] = []
  const serverBefore = server.cpuMs() ?? Number.NaN
  const clientBefore = process.cpuUsage()
  const started = performance.now()
  await Promise.all(
    cs.map(async (c) => {
      while (next < calls) {
        next++
        const t0 = performance.now()
        await c(args)
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const elapsed = performance.now() - started
  const client = process.cpuUsage(clientBefore)
  return {
    rate: calls / (elapsed / 1000),
    p99: percentile(latencies, 99),
    serverCpu: ((server.cpuMs() ?? Number.NaN) - serverBefore) / calls,
    clientCpu: (client.user + client.system) / 1000 / calls,
  }
}

const bare = await spawnServer('bare', history, 0)
const quenchz = await spawnServer('quenchz', history, 0)
const token = quenchz.tokens['agent-alpha']
const loadClients = [
  {
    label: 'official SDK v2 client',
    bare: await sdkCallers(bare, undefined),
    quenchz: await sdkCallers(quenchz, token),
  },
  {
    label: 'plain HTTP client (same request, answer read, not parsed)',
    bare: plainCallers(bare, undefined),
    quenchz: plainCallers(quenchz, token),
  },
]

const windows = [
  { label: 'one month (USD 2026-03)', args: { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }, calls: 800 },
  {
    label: 'full history (USD 1999-01-04 … 2026-04-13)',
    args: { currency: 'USD', start: '1999-01-04', end: '2026-04-13' },
    calls: 200,
  },
]

console.log(
  `calls.bench: concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds, loopback, 2026-07-28; servers in their own processes${bare.pinned ? ', each pinned to core 0' : ''}`,
)
for (const load of loadClients) {
  console.log(`load client: ${load.label}`)
  for (const w of windows) {
    // Warm both (JIT, and quenchz's settled-answer cache, which is what a repeated dated window meets in service).
    await phase(bare, load.bare.calls, w.args, 200)
    await phase(quenchz, load.quenchz.calls, w.args, Math.min(200, w.calls))
    const ratios: number[] = []
    const bareRuns: PhaseResult[] = []
    const quenchzRuns: PhaseResult[] = []
    for (let i = 0; i < ROUNDS; i++) {
      const b = await phase(bare, load.bare.calls, w.args, 800)
      const q = await phase(quenchz, load.quenchz.calls, w.args, w.calls)
      bareRuns.push(b)
      quenchzRuns.push(q)
      ratios.push(q.rate / b.rate)
    }
    const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ')
    const line = (runs: PhaseResult[]) =>
      `${median(runs.map((r) => r.rate)).toFixed(0)} calls/s, p99 ${median(runs.map((r) => r.p99)).toFixed(1)} ms [${Math.min(...runs.map((r) => r.p99)).toFixed(1)}–${Math.max(...runs.map((r) => r.p99)).toFixed(1)}]; CPU per call: server ${median(runs.map((r) => r.serverCpu)).toFixed(2)} ms, load client ${median(runs.map((r) => r.clientCpu)).toFixed(2)} ms`
    console.log(`  ${w.label}`)
    console.log(`    bare no-op:  ${line(bareRuns)}`)
    console.log(`    quenchz:     ${line(quenchzRuns)}`)
    console.log(
      `    ratio quenchz / bare: ${median(ratios).toFixed(2)} [${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}]  (rounds: ${fmt(ratios)})`,
    )
    // The same-run ratio of server CPU per call (bare / quenchz: above 1 means quenchz's server does less per call).
    // When the load client's CPU per call is the larger, calls/s measure the client, not the servers.
    const cpuRatios = bareRuns.map((b, i) => b.serverCpu / (quenchzRuns[i] as PhaseResult).serverCpu)
    console.log(
      `    server CPU per call, bare / quenchz: ${median(cpuRatios).toFixed(2)} [${Math.min(...cpuRatios).toFixed(2)}–${Math.max(...cpuRatios).toFixed(2)}]`,
    )
  }
}

for (const load of loadClients) {
  await load.bare.close()
  await load.quenchz.close()
}
await bare.stop()
await quenchz.stop()
