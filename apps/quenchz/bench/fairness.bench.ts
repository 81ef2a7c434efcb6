// Fairness in time: a quiet caller at 5 calls/s, its p50 and p99 latency on an idle server and while a greedy caller
// keeps 16 calls in flight, on quenchz with its fair scheduler and, for contrast, without it. The same one-month
// rates.window for both callers; servers in their own processes (pinned to one core when taskset exists), the
// greedy caller in another (bench/support/greedy.ts), and this process is the quiet caller. Reported as ratios of loaded to idle p99 measured in the same run,
// end to end and inside the server (its `request` event to the answer's last byte), with the server's CPU/wall.
// Run: npm run bench -w apps/quenchz

import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
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
  /** The same quiet calls timed inside the server (headers parsed to last byte written). */
  idleInServer: number[]
  loadedInServer: number[]
  /** The server's CPU time over wall time while loaded: below 1 it was waiting, or off the CPU. */
  loadedCpuPerWall: number
  /** The longest stall of the quiet client's own event loop while loaded, ms. */
  clientLoopDelayMaxMs: number
}

interface ServerStats {
  inServerMs: number[]
  cpuPerWall: number
}

async function measure(server: BenchServer): Promise<Measured> {
  const quiet = await client(server, 'agent-beta')
  await quietRun(quiet) // warm-up
  await server.stats()
  const idle = await quietRun(quiet)
  const idleStats = (await server.stats()) as ServerStats
  const load = await greedyLoad(server)
  await sleep(500)
  await server.stats()
  const t0 = performance.now()
  // This process's own event-loop delay while it is the quiet client: a late timer or a late read here is latency
  // the quiet caller measures that no server caused.
  const clientDelay = monitorEventLoopDelay({ resolution: 1 })
  clientDelay.enable()
  const loaded = await quietRun(quiet)
  clientDelay.disable()
  const loadedStats = (await server.stats()) as ServerStats
  const greedyCalls = await load.stop()
  const greedyRate = greedyCalls / ((performance.now() - t0 + 500) / 1000)
  await quiet.close()
  return {
    idle,
    loaded,
    greedyRate,
    idleInServer: idleStats.inServerMs,
    loadedInServer: loadedStats.inServerMs,
    loadedCpuPerWall: loadedStats.cpuPerWall,
    clientLoopDelayMaxMs: clientDelay.max / 1e6,
  }
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')
const loadBefore = load()
const fair = await spawnServer('quenchz', history, 0)
const unfair = await spawnServer('quenchz-unscheduled', history, 0)
console.log(
  `fairness.bench: perCaller ${process.env.BENCH_PER_CALLER ?? 'default'}; quiet caller ${QUIET_PER_SECOND} calls/s × ${QUIET_CALLS}, greedy caller ${GREEDY_IN_FLIGHT} in flight, USD one-month rates.window, ${ROUNDS} rounds; servers in their own processes${fair.pinned ? ', pinned to core 0' : ''}`,
)
interface Row {
  ratios: number[]
  idle: number[]
  loaded: number[]
  idleP50: number[]
  loadedP50: number[]
  p50: number[]
  rate: number[]
  inServerRatios: number[]
  inServerIdle: number[]
  inServerLoaded: number[]
  cpuPerWall: number[]
  clientDelay: number[]
}
const emptyRow = (): Row => ({
  ratios: [],
  idle: [],
  loaded: [],
  idleP50: [],
  loadedP50: [],
  p50: [],
  rate: [],
  inServerRatios: [],
  inServerIdle: [],
  inServerLoaded: [],
  cpuPerWall: [],
  clientDelay: [],
})
const rows: Record<string, Row> = {
  'with the fair scheduler': emptyRow(),
  'without (contrast)': emptyRow(),
}
for (let round = 0; round < ROUNDS; round++) {
  for (const [label, server] of [
    ['with the fair scheduler', fair],
    ['without (contrast)', unfair],
  ] as const) {
    const m = await measure(server)
    const row = rows[label] as Row
    row.idle.push(percentile(m.idle, 99))
    row.loaded.push(percentile(m.loaded, 99))
    row.idleP50.push(percentile(m.idle, 50))
    row.loadedP50.push(percentile(m.loaded, 50))
    row.p50.push(percentile(m.loaded, 50) / percentile(m.idle, 50))
    row.ratios.push(percentile(m.loaded, 99) / percentile(m.idle, 99))
    row.rate.push(m.greedyRate)
    row.inServerIdle.push(percentile(m.idleInServer, 99))
    row.inServerLoaded.push(percentile(m.loadedInServer, 99))
    row.inServerRatios.push(percentile(m.loadedInServer, 99) / percentile(m.idleInServer, 99))
    row.cpuPerWall.push(m.loadedCpuPerWall)
    row.clientDelay.push(m.clientLoopDelayMaxMs)
  }
}
for (const [label, row] of Object.entries(rows)) {
  const range = (xs: number[]) =>
    `${median(xs).toFixed(2)} [${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}]`
  console.log(`  ${label}`)
  console.log(
    `    quiet p99 idle ${median(row.idle).toFixed(1)} ms, under greedy load ${median(row.loaded).toFixed(1)} ms; p50 ${median(row.idleP50).toFixed(1)} ms and ${median(row.loadedP50).toFixed(1)} ms; greedy served ${median(row.rate).toFixed(0)} calls/s`,
  )
  console.log(`    loaded/idle quiet p99: ${range(row.ratios)}   p50: ${range(row.p50)}`)
  console.log(
    `    inside the server: quiet p99 idle ${median(row.inServerIdle).toFixed(1)} ms, loaded ${median(row.inServerLoaded).toFixed(1)} ms, ratio ${range(row.inServerRatios)}; server CPU/wall while loaded ${range(row.cpuPerWall)}`,
  )
  console.log(`    the quiet client's own longest event-loop stall while loaded: ${range(row.clientDelay)} ms`)
}
console.log(`  load average (1, 5, 15 min) before: ${loadBefore}, after: ${load()}`)
await fair.stop()
await unfair.stop()
