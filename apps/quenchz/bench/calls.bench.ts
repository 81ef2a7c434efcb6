// rates.window calls per second and p99 latency at concurrency 16 through the whole quenchz stack (host guard, RS256
// audience, budget, scheduler, concealment, SDK v2, rates core on the ECB history file), as ratios to the bare
// per-request SDK v2 server (one no-op tool, no gate) measured in the same run. Each server runs in its own process
// (pinned to one core when taskset exists); this process is the load client. Two windows: one month of USD, and
// the full USD history in the file. Bounded: a fixed number of calls per phase, alternating phases.
// Run: npm run bench -w apps/quenchz

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { sharedDir } from '@tollgate/test-support'
import { type BenchServer, median, percentile, spawnServer } from './support/spawn-server.js'

const CONCURRENCY = 16
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)

const history = join(sharedDir(), 'data', 'ecb', 'eurofxref-hist.zip')
if (!existsSync(history)) {
  console.log(`calls.bench: skipped, the ECB history file is absent (${history})`)
  process.exit(0)
}

async function clients(server: BenchServer, token: string | undefined): Promise<Client[]> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
  return Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const c = new Client({ name: 'bench', version: '0' }, { versionNegotiation: { mode: 'auto' } })
      await c.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }))
      return c
    }),
  )
}

interface PhaseResult {
  rate: number
  p99: number
  /** CPU per call of the server process and of this (load client) process, ms; NaN where unknown. */
  serverCpu: number
  clientCpu: number
}

async function phase(
  server: BenchServer,
  cs: Client[],
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
        const r = await c.callTool({ name: 'rates.window', arguments: args })
        latencies.push(performance.now() - t0)
        if (r.isError) throw new Error(`a bench call was refused: ${JSON.stringify(r.content).slice(0, 200)}`)
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
const bareClients = await clients(bare, undefined)
const quenchzClients = await clients(quenchz, quenchz.tokens['agent-alpha'])

const windows = [
  { label: 'one month (USD 2026-03)', args: { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }, calls: 800 },
  {
    label: 'full history (USD 1999-01-04 … 2026-04-13)',
    args: { currency: 'USD', start: '1999-01-04', end: '2026-04-13' },
    calls: 200,
  },
]

console.log(
  `calls.bench: concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds, loopback, SDK v2 client on 2026-07-28; servers in their own processes${bare.pinned ? ', each pinned to core 0' : ''}`,
)
for (const w of windows) {
  // Warm both (JIT, and quenchz's settled-answer cache, which is what a repeated dated window meets in service).
  await phase(bare, bareClients, w.args, 200)
  await phase(quenchz, quenchzClients, w.args, Math.min(200, w.calls))
  const ratios: number[] = []
  const bareRuns: PhaseResult[] = []
  const quenchzRuns: PhaseResult[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const b = await phase(bare, bareClients, w.args, 800)
    const q = await phase(quenchz, quenchzClients, w.args, w.calls)
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

for (const c of [...bareClients, ...quenchzClients]) await c.close()
await bare.stop()
await quenchz.stop()
