// What `--budget-redis-replicas 1` (Redis WAIT after each charge) costs a call: the open budget's charge through
// RedisBudgetStore on a master with one replica (both redis-server processes of this bench, on free loopback ports),
// without WAIT and with it, in alternating rounds. Two loads: one charge at a time (the latency WAIT adds), and 16
// at once on the one connection a quenchz process has (WAIT blocks that connection until a replica acknowledges, so
// charges are serialized). Reported as medians over the rounds and the ratio with ÷ without.
// Run: npm run bench -w apps/quenchz (skipped without redis-server)

import { existsSync } from 'node:fs'
import { budgetRedisOptions, OpenFairBudget, RedisBudgetStore, wallClock } from '@tollgate/gate'
import { startRedisSentinelSet } from '@tollgate/test-support'
import { Redis } from 'ioredis'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const SEQUENTIAL = 2000
const CONCURRENT = 16
const CONCURRENT_CHARGES = 8000

if (!existsSync('/usr/bin/redis-server')) {
  console.log('redis-replicas: skipped (no redis-server)')
  process.exit(0)
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

const set = await startRedisSentinelSet()
const redis = new Redis({ host: '127.0.0.1', port: await set.masterPort(), ...budgetRedisOptions() })
if (redis.status !== 'ready') await new Promise((r) => redis.once('ready', r))

const policy = { reserve: 1_000_000_000, pool: 0, windowSeconds: 86_400 }
const budgetFor = (replicas: number, round: number) =>
  new OpenFairBudget({
    policy,
    clock: wallClock,
    store: new RedisBudgetStore(redis, { prefix: `bench:${replicas}:${round}:`, replicas }),
  })

async function sequential(replicas: number, round: number): Promise<number> {
  const budget = budgetFor(replicas, round)
  for (let i = 0; i < 200; i++) await budget.request('warm')
  const started = performance.now()
  for (let i = 0; i < SEQUENTIAL; i++) {
    if (!(await budget.request('alice')).admitted) throw new Error('refused')
  }
  return ((performance.now() - started) * 1000) / SEQUENTIAL
}

async function concurrent(replicas: number, round: number): Promise<number> {
  const budget = budgetFor(replicas, round)
  let left = CONCURRENT_CHARGES
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENT }, async (_, i) => {
      while (left-- > 0) if (!(await budget.request(`c${i}`)).admitted) throw new Error('refused')
    }),
  )
  return CONCURRENT_CHARGES / ((performance.now() - started) / 1000)
}

const results: Record<string, number[]> = { seq0: [], seq1: [], conc0: [], conc1: [] }
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating order, so neither mode always runs on a warmer machine.
    for (const replicas of round % 2 === 0 ? [0, 1] : [1, 0]) {
      results[`seq${replicas}`]?.push(await sequential(replicas, round))
      results[`conc${replicas}`]?.push(await concurrent(replicas, round))
    }
  }
} finally {
  redis.disconnect()
  await set.dispose()
}
const [s0, s1, c0, c1] = [results.seq0, results.seq1, results.conc0, results.conc1].map((x) => median(x ?? []))
console.log(`redis-replicas (${ROUNDS} rounds, medians)`)
console.log(`  one at a time: ${s0?.toFixed(0)} µs/charge without WAIT, ${s1?.toFixed(0)} µs with WAIT 1`)
console.log(
  `  ${CONCURRENT} at once: ${c0?.toFixed(0)} charges/s without WAIT, ${c1?.toFixed(0)} with WAIT 1 (${((c1 as number) / (c0 as number)).toFixed(2)}×)`,
)
