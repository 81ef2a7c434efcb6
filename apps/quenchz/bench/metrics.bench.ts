// What metrics cost a busy quenchz: the same server with its admin port off and on (metrics counted on every call and
// scraped once a round, as Prometheus would), each in its own process pinned to one core (a fresh pair each round),
// measured in alternated rounds by the plain HTTP load client at concurrency 16 (one month of USD, the call quenchz serves most). Reported:
// calls/s of each, the median of the same-round ratios (on / off) with their range, and server CPU per call.
// Issue 25's bar: metrics on costs at most 3% of calls/s by the median.
// Run: npm run bench -w apps/quenchz (BENCH_ROUNDS, default 9; BENCH_CALLS per round and side, default 20000)
// BENCH_BEFORE_REPO=<another checkout of this repository, installed>: a before/after run instead — both sides with the
// admin port off, "off" being that checkout's quenchz (its serve.ts and sources) and "on" this one's.

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { sharedDir } from '@tollgate/test-support'
import { plainCaller } from './support/plain-call.js'
import { type BenchServer, hasTaskset, median, spawnServer } from './support/spawn-server.js'

const CONCURRENCY = 16
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9)
const CALLS = Number(process.env.BENCH_CALLS ?? 20000)
const WARM_CALLS = 5000
const ARGS = { currency: 'USD', start: '2026-03-01', end: '2026-03-31' }
const BEFORE_REPO = process.env.BENCH_BEFORE_REPO
const BEFORE_SERVE = BEFORE_REPO === undefined ? undefined : join(BEFORE_REPO, 'apps/quenchz/bench/support/serve.ts')
const [OFF_LABEL, ON_LABEL] =
  BEFORE_REPO === undefined ? ['admin port off', 'admin port on'] : ['build before', 'this build']
/** Starts one side of a pair: off (the admin port off, or the build before) or on. */
const startSide = (side: 'off' | 'on') =>
  BEFORE_SERVE === undefined
    ? spawnServer(side === 'off' ? 'quenchz' : 'quenchz-admin', history, 0)
    : side === 'off'
      ? spawnServer('quenchz', history, 0, BEFORE_SERVE)
      : spawnServer('quenchz', history, 0)

const history = join(sharedDir(), 'data', 'ecb', 'eurofxref-hist.zip')
if (!existsSync(history)) {
  console.log(`metrics.bench: skipped, the ECB history file is absent (${history})`)
  process.exit(0)
}

interface Round {
  rate: number
  /** Server CPU per call, ms (NaN where /proc is absent). */
  cpu: number
}

async function round(server: BenchServer, calls: number): Promise<Round> {
  const caller = plainCaller(server.url, server.tokens['agent-alpha'], CONCURRENCY)
  let next = 0
  const cpuBefore = server.cpuMs() ?? Number.NaN
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < calls) {
        next++
        await caller.call(ARGS)
      }
    }),
  )
  const elapsed = performance.now() - started
  // The scrape a Prometheus would make (every 15 s or so in service; here once a round, inside the measured work).
  if (server.admin !== undefined) {
    const r = await fetch(`${server.admin}/metrics`)
    if (r.status !== 200 || !(await r.text()).includes('quenchz_tool_calls_total'))
      throw new Error('the admin port did not serve the metrics')
  }
  const cpu = ((server.cpuMs() ?? Number.NaN) - cpuBefore) / calls
  caller.close()
  return { rate: calls / (elapsed / 1000), cpu }
}

console.log(
  `metrics.bench: concurrency ${CONCURRENCY}, ${ROUNDS} rounds of ${CALLS} calls on each side, a fresh pair of servers each round, plain HTTP client, one month of USD${hasTaskset ? '; servers pinned to core 0' : ''}`,
)
const offRounds: Round[] = []
const onRounds: Round[] = []
const ratios: number[] = []
const cpuRatios: number[] = []
for (let i = 0; i < ROUNDS; i++) {
  // A fresh pair each round, started and measured in alternating order. Of two processes of the SAME server (both
  // off), the one started first served ~4% more calls/s, 9 rounds running, and swapping the start order swapped the
  // sign: with one pair for the whole run that bias was as large as the cost measured.
  const first = i % 2 === 0 ? 'off' : 'on'
  const a = await startSide(first)
  const b = await startSide(first === 'off' ? 'on' : 'off')
  const [off, on] = first === 'off' ? [a, b] : [b, a]
  try {
    // Warm both (JIT, the settled-answer cache): with 300 calls each, the side measured second was still the faster.
    await round(off, WARM_CALLS)
    await round(on, WARM_CALLS)
    const rA = await round(a, CALLS)
    const rB = await round(b, CALLS)
    const [rOff, rOn] = a === off ? [rA, rB] : [rB, rA]
    offRounds.push(rOff)
    onRounds.push(rOn)
    ratios.push(rOn.rate / rOff.rate)
    cpuRatios.push(rOn.cpu / rOff.cpu)
  } finally {
    await a.stop()
    await b.stop()
  }
}
const fmt = (xs: number[], digits = 3) => xs.map((x) => x.toFixed(digits)).join(', ')
const line = (rs: Round[]) =>
  `${median(rs.map((r) => r.rate)).toFixed(0)} calls/s [${Math.min(...rs.map((r) => r.rate)).toFixed(0)}–${Math.max(...rs.map((r) => r.rate)).toFixed(0)}], server CPU per call ${median(rs.map((r) => r.cpu)).toFixed(3)} ms`
console.log(`  ${OFF_LABEL}: ${line(offRounds)}`)
console.log(`  ${ON_LABEL}: ${line(onRounds)}`)
console.log(
  `  calls/s on / off: median ${median(ratios).toFixed(3)} [${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}] (rounds: ${fmt(ratios)})`,
)
console.log(
  `  server CPU per call on / off: median ${median(cpuRatios).toFixed(3)} [${Math.min(...cpuRatios).toFixed(3)}–${Math.max(...cpuRatios).toFixed(3)}]`,
)
