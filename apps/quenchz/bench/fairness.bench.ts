// Fairness in time: a quiet caller at 5 calls/s, its p50 and p99 latency on an idle server and while a greedy caller
// keeps 16 calls in flight, on quenchz with its fair scheduler and, for contrast, without it. The same one-month
// rates.window for both callers. Three processes besides this one, so that what is measured is the server, not the
// clients' contention: the server, pinned to core 0 when taskset exists; the greedy caller (support/greedy.ts, plain
// HTTP keep-alive, light enough that the server is the bottleneck) and the quiet caller (support/quiet.ts, the
// official SDK v2 client), each in its own process, both pinned to core 1. Reported as ratios of loaded to idle p99
// measured in the same run, end to end and inside the server (its `request` event to the answer's last byte), with
// the server's and the greedy caller's CPU/wall and the quiet process's own event-loop delay while loaded.
// Run: npm run bench -w apps/quenchz

import { existsSync } from 'node:fs'
import { availableParallelism, loadavg, setPriority } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { sharedDir } from '@tollgate/test-support'
import {
  type BenchServer,
  hasTaskset,
  median,
  percentile,
  spawnBenchProcess,
  spawnServer,
} from './support/spawn-server.js'

const GREEDY_IN_FLIGHT = 16
const QUIET_PER_SECOND = 5
// 150 calls a round by default, so that p99 is the second-worst call of the round, not its single worst.
const QUIET_CALLS = Number(process.env.BENCH_QUIET_CALLS ?? 150)
const WARM_UP_CALLS = 25
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
// The server has core 0 to itself; both callers share the other one (a single-core machine: everything on 0).
const SERVER_CORE = 0
const CLIENT_CORE = availableParallelism() > 1 ? 1 : 0

const history = join(sharedDir(), 'data', 'ecb', 'eurofxref-hist.zip')
if (!existsSync(history)) {
  console.log(`fairness.bench: skipped, the ECB history file is absent (${history})`)
  process.exit(0)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const GREEDY = fileURLToPath(new URL('./support/greedy.ts', import.meta.url))
const QUIET = fileURLToPath(new URL('./support/quiet.ts', import.meta.url))

interface QuietRun {
  latencies: number[]
  loopDelayMaxMs: number
  loopDelayP99Ms: number
}

/** Starts one caller's process (support/quiet.ts or support/greedy.ts) on the callers' core; resolves once ready. */
async function startCaller(script: string, server: BenchServer, sub: string, arg: number) {
  const caller = spawnBenchProcess(script, [server.url, server.tokens[sub] as string, String(arg)], CLIENT_CORE)
  if ((await caller.nextLine()) !== 'ready') throw new Error(`${script} did not start`)
  return caller
}

/** The quiet caller's process; `run(n)` makes n calls on its schedule. */
async function quietCaller(server: BenchServer) {
  const quiet = await startCaller(QUIET, server, 'agent-beta', QUIET_PER_SECOND)
  return {
    async run(calls: number): Promise<QuietRun> {
      quiet.child.stdin?.write(`run ${calls}\n`)
      return JSON.parse(await quiet.nextLine()) as QuietRun
    },
    stop: quiet.stop,
  }
}

// The load generator shares the callers' core with the quiet caller's process (two cores in all), which a real
// deployment never does: at its default niceness it delays the quiet process's own wake-ups by up to tens of ms. It
// runs at niceness BENCH_GREEDY_NICE (default 10; 0 turns this off) so the quiet process is scheduled when it wakes.
// Its 16 calls stay in flight back to back: it still keeps the server busy (see "server CPU/wall").
const GREEDY_NICE = Number(process.env.BENCH_GREEDY_NICE ?? 10)

/** Starts the greedy caller's process; resolves once its calls are in flight. */
async function greedyLoad(server: BenchServer) {
  const greedy = await startCaller(GREEDY, server, 'agent-alpha', GREEDY_IN_FLIGHT)
  if (GREEDY_NICE !== 0 && greedy.child.pid !== undefined) setPriority(greedy.child.pid, GREEDY_NICE)
  return {
    cpuMs: greedy.cpuMs,
    /** Stops the calls; resolves with how many were answered. */
    async stop(): Promise<number> {
      const answered = greedy.nextLine()
      greedy.child.kill('SIGTERM')
      const calls = Number(await answered)
      await greedy.stop()
      return calls
    },
  }
}

interface Phase {
  /** End-to-end latencies of the quiet calls, ms. */
  latencies: number[]
  /** The same calls inside the server: `request` event to the answer's last byte handed to the socket, ms. */
  inServerMs: number[]
  /** The same calls before that: the client's stamp to the server's `request` event, ms. */
  arrivalMs: number[]
  /** The server's CPU time over wall time: near 1, the server was the bottleneck. */
  serverCpuPerWall: number
  serverLoopDelayP99Ms: number
  serverLoopDelayMaxMs: number
  /** The quiet caller's own event-loop delay. */
  quietLoopDelayP99Ms: number
  quietLoopDelayMaxMs: number
}

interface Measured {
  idle: Phase
  loaded: Phase & {
    greedyRate: number
    /** The greedy caller's CPU time over wall time: near 1, it was bound by its own CPU, not by the server. */
    greedyCpuPerWall: number
  }
}

interface ServerStats {
  inServerMs: number[]
  arrivalMs: number[]
  cpuPerWall: number
  loopDelayMaxMs: number
  loopDelayP99Ms: number
}

const phase = (quiet: QuietRun, stats: ServerStats): Phase => ({
  latencies: quiet.latencies,
  inServerMs: stats.inServerMs,
  arrivalMs: stats.arrivalMs,
  serverCpuPerWall: stats.cpuPerWall,
  serverLoopDelayP99Ms: stats.loopDelayP99Ms,
  serverLoopDelayMaxMs: stats.loopDelayMaxMs,
  quietLoopDelayP99Ms: quiet.loopDelayP99Ms,
  quietLoopDelayMaxMs: quiet.loopDelayMaxMs,
})

async function measure(server: BenchServer): Promise<Measured> {
  const quiet = await quietCaller(server)
  await quiet.run(WARM_UP_CALLS)
  await server.stats()
  const idle = phase(await quiet.run(QUIET_CALLS), (await server.stats()) as ServerStats)
  const load = await greedyLoad(server)
  await sleep(500)
  await server.stats()
  const greedyCpu0 = load.cpuMs() ?? Number.NaN
  const t0 = performance.now()
  const loadedRun = await quiet.run(QUIET_CALLS)
  const loadedStats = (await server.stats()) as ServerStats
  const loadedWall = performance.now() - t0
  const greedyCpuPerWall = ((load.cpuMs() ?? Number.NaN) - greedyCpu0) / loadedWall
  const greedyCalls = await load.stop()
  const greedyRate = greedyCalls / ((performance.now() - t0 + 500) / 1000)
  await quiet.stop()
  return { idle, loaded: { ...phase(loadedRun, loadedStats), greedyRate, greedyCpuPerWall } }
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')
const loadBefore = load()
console.log(
  `fairness.bench: perCaller ${process.env.BENCH_PER_CALLER ?? 'default'}; quiet caller ${QUIET_PER_SECOND} calls/s × ${QUIET_CALLS}, greedy caller ${GREEDY_IN_FLIGHT} in flight at niceness ${GREEDY_NICE}, USD one-month rates.window, ${ROUNDS} rounds; server, greedy caller and quiet caller in their own processes${process.env.BENCH_SERVER_NODE_FLAGS ? `, server node flags ${process.env.BENCH_SERVER_NODE_FLAGS}` : ''}${hasTaskset ? `, the server pinned to core ${SERVER_CORE}, the callers to core ${CLIENT_CORE}` : ''}; one server process at a time`,
)
const rows: Record<string, Measured[]> = { 'with the fair scheduler': [], 'without (contrast)': [] }
for (let round = 0; round < ROUNDS; round++) {
  // One server process at a time, started afresh: an idle second server on core 0 would still wake up there (its
  // 1 ms event-loop delay timer) and preempt the measured one and its GC threads.
  for (const [label, kind] of [
    ['with the fair scheduler', 'quenchz'],
    ['without (contrast)', 'quenchz-unscheduled'],
  ] as const) {
    const server = await spawnServer(kind, history, SERVER_CORE)
    ;(rows[label] as Measured[]).push(await measure(server))
    await server.stop()
  }
}
const p99 = (xs: number[]) => percentile(xs, 99)
const p50 = (xs: number[]) => percentile(xs, 50)
/** Median over rounds, then the range. */
const range = (xs: number[], digits = 2) =>
  `${median(xs).toFixed(digits)} [${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}]`
for (const [label, rounds] of Object.entries(rows)) {
  const idle = (f: (p: Phase) => number) => rounds.map((m) => f(m.idle))
  const loaded = (f: (p: Measured['loaded']) => number) => rounds.map((m) => f(m.loaded))
  const ratio = (f: (p: Phase) => number) => rounds.map((m) => f(m.loaded) / f(m.idle))
  const both = (f: (p: Phase) => number, digits = 1) =>
    `idle ${range(idle(f), digits)}, loaded ${range(loaded(f), digits)}`
  console.log(`  ${label}`)
  console.log(
    `    loaded/idle quiet p99: ${range(ratio((p) => p99(p.latencies)))}   p50: ${range(ratio((p) => p50(p.latencies)))}   per round: ${ratio(
      (p) => p99(p.latencies),
    )
      .map((x) => x.toFixed(2))
      .join(', ')}`,
  )
  console.log(`    quiet end to end, ms: p99 ${both((p) => p99(p.latencies))}; p50 ${both((p) => p50(p.latencies))}`)
  console.log(
    `    inside the server, ms: p99 ${both((p) => p99(p.inServerMs))} (ratio ${range(ratio((p) => p99(p.inServerMs)))}); before it (client stamp to the request event): p99 ${both((p) => p99(p.arrivalMs))}`,
  )
  console.log(
    `    greedy served ${range(
      loaded((p) => p.greedyRate),
      0,
    )} calls/s; CPU/wall while loaded: server ${range(loaded((p) => p.serverCpuPerWall))}, greedy caller ${range(loaded((p) => p.greedyCpuPerWall))}`,
  )
  console.log(
    `    event-loop delay p99 / max, ms: server ${both((p) => p.serverLoopDelayP99Ms)} / ${both((p) => p.serverLoopDelayMaxMs)}; quiet caller ${both((p) => p.quietLoopDelayP99Ms)} / ${both((p) => p.quietLoopDelayMaxMs)}`,
  )
}
console.log(`  load average (1, 5, 15 min) before: ${loadBefore}, after: ${load()}`)
