// Fairness in time: a quiet caller at 5 calls/s, its p50 and p99 latency on an idle server and while a greedy caller
// keeps 16 calls in flight, on quenchz with its fair scheduler and, for contrast, without it. The same one-month
// rates.window for both callers; servers in their own processes (pinned to one core when taskset exists), the
// greedy caller in another (bench/support/greedy.ts), and this process is the quiet caller. Reported as ratios of loaded to idle p99 measured in the same run.
// Run: npm run bench -w apps/quenchz

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { sharedDir } from '@tollgate/test-support'
import { type BenchServer, median, percentile, spawnServer } from './support/spawn-server.js'

const GREEDY_IN_FLIGHT = 16
const QUIET_PER_SECOND = 5
const QUIET_CALLS = Number(process.env.BENCH_QUIET_CALLS ?? 40)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2)
const ARGS = { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }

const history = join(sharedDir(), 'data', 'ecb', 'eurofxref-hist.zip')
if (!existsSync(history)) {
  console.log(`fairness.bench: skipped, the ECB history file is absent (${history})`)
  process.exit(0)
}

async function client(server: BenchServer, sub: string): Promise<Client> {
  const c = new Client({ name: sub, version: '0' }, { versionNegotiation: { mode: 'auto' } })
  const headers = { authorization: `Bearer ${server.tokens[sub]}` }
  await c.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } }))
  return c
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The quiet caller: calls on a fixed schedule (open loop), latencies in ms. */
async function quietRun(c: Client): Promise<number[]> {
  const latencies: number[] = []
  const pending: Promise<void>[] = []
  const start = performance.now()
  for (let i = 0; i < QUIET_CALLS; i++) {
    const due = start + (i * 1000) / QUIET_PER_SECOND
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const t0 = performance.now()
    pending.push(
      c.callTool({ name: 'rates.window', arguments: ARGS }).then((r) => {
        if (r.isError) throw new Error('a quiet call was refused')
        latencies.push(performance.now() - t0)
      }),
    )
  }
  await Promise.all(pending)
  return latencies
}

const GREEDY = fileURLToPath(new URL('./support/greedy.ts', import.meta.url))

/** Starts the greedy caller's process; resolves once its calls are in flight. */
async function greedyLoad(server: BenchServer): Promise<{ stop: () => Promise<number> }> {
  const child = spawn(
    process.execPath,
    [
      '--conditions=@tollgate/source',
      '--import',
      'tsx',
      GREEDY,
      server.url,
      server.tokens['agent-alpha'] as string,
      String(GREEDY_IN_FLIGHT),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let out = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (c: string) => {
    out += c
  })
  while (!out.includes('ready\n')) await sleep(20)
  return {
    async stop() {
      const gone = new Promise<void>((r) => child.once('exit', () => r()))
      child.kill('SIGTERM')
      await gone
      return Number(out.split('\n')[1])
    },
  }
}

interface Measured {
  idle: number[]
  loaded: number[]
  greedyRate: number
}

async function measure(server: BenchServer): Promise<Measured> {
  const quiet = await client(server, 'agent-beta')
  await quietRun(quiet) // warm-up
  const idle = await quietRun(quiet)
  const load = await greedyLoad(server)
  await sleep(500)
  const t0 = performance.now()
  const loaded = await quietRun(quiet)
  const greedyCalls = await load.stop()
  const greedyRate = greedyCalls / ((performance.now() - t0 + 500) / 1000)
  await quiet.close()
  return { idle, loaded, greedyRate }
}

const fair = await spawnServer('quenchz', history, 0)
const unfair = await spawnServer('quenchz-unscheduled', history, 0)
console.log(
  `fairness.bench: quiet caller ${QUIET_PER_SECOND} calls/s × ${QUIET_CALLS}, greedy caller ${GREEDY_IN_FLIGHT} in flight, USD one-month rates.window, ${ROUNDS} rounds; servers in their own processes${fair.pinned ? ', pinned to core 0' : ''}`,
)
const rows: Record<string, { ratios: number[]; idle: number[]; loaded: number[]; p50: number[]; rate: number[] }> = {
  'with the fair scheduler': { ratios: [], idle: [], loaded: [], p50: [], rate: [] },
  'without (contrast)': { ratios: [], idle: [], loaded: [], p50: [], rate: [] },
}
for (let round = 0; round < ROUNDS; round++) {
  for (const [label, server] of [
    ['with the fair scheduler', fair],
    ['without (contrast)', unfair],
  ] as const) {
    const m = await measure(server)
    const row = rows[label] as (typeof rows)[string]
    row.idle.push(percentile(m.idle, 99))
    row.loaded.push(percentile(m.loaded, 99))
    row.p50.push(percentile(m.loaded, 50) / percentile(m.idle, 50))
    row.ratios.push(percentile(m.loaded, 99) / percentile(m.idle, 99))
    row.rate.push(m.greedyRate)
  }
}
for (const [label, row] of Object.entries(rows)) {
  const range = (xs: number[]) =>
    `${median(xs).toFixed(2)} [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`
  console.log(`  ${label}`)
  console.log(
    `    quiet p99 idle ${median(row.idle).toFixed(1)} ms, under greedy load ${median(row.loaded).toFixed(1)} ms; greedy served ${median(row.rate).toFixed(0)} calls/s`,
  )
  console.log(`    loaded/idle quiet p99: ${range(row.ratios)}   p50: ${range(row.p50)}`)
}
await fair.stop()
await unfair.stop()
