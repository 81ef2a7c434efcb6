// The digest's §8.3 numbers as literal tests, on an injected frozen clock, run against every BudgetStore.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { probeRedis, type RedisProbe } from '@tollgate/test-support'
import {
  type BudgetPolicy,
  type BudgetStore,
  budgetPolicy,
  FairBudget,
  type ManualClock,
  MemoryBudgetStore,
  manualClock,
  NaiveBucket,
  OpenFairBudget,
  RedisBudgetStore,
  wallClock,
} from '../src/index.ts'

async function drain(
  budget: { request(c: string): Promise<{ admitted: boolean }> },
  caller: string,
  attempts: number,
): Promise<number> {
  let admitted = 0
  for (let i = 0; i < attempts; i++) if ((await budget.request(caller)).admitted) admitted++
  return admitted
}

let probe: RedisProbe
let keySeq = 0
before(async () => {
  probe = await probeRedis('gate-test')
})
after(async () => {
  await probe.cleanup()
})

const stores: Array<{ name: string; make: () => BudgetStore; skip: () => string | undefined }> = [
  { name: 'memory store', make: () => new MemoryBudgetStore(), skip: () => undefined },
  {
    name: 'Redis store',
    make: () => new RedisBudgetStore(probe.redis as NonNullable<RedisProbe['redis']>, { prefix: probe.prefix }),
    skip: () => probe.skip,
  },
]

for (const s of stores) {
  describe(`budget arithmetic on the ${s.name}`, () => {
    const naiveBucket = (capacity: number, refillPerSecond: number, clock: ManualClock) =>
      new NaiveBucket({ capacity, refillPerSecond, clock: clock.now, store: s.make(), key: `k${keySeq++}` })
    const fair = (callers: string[], clock = manualClock()) => ({
      clock,
      budget: new FairBudget({
        capacity: 60,
        refillPerSecond: 60,
        callers,
        clock: clock.now,
        store: s.make(),
        key: `k${keySeq++}`,
      }),
    })

    test('naive bucket: greedy takes 60 of 1000 and the quiet caller then gets 0', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const clock = manualClock()
      const naive = naiveBucket(60, 60, clock)
      assert.equal(await drain(naive, 'agent-alpha', 1000), 60)
      assert.equal(await drain(naive, 'agent-beta', 60), 0)
    })

    test('fair budget, two callers: greedy gets 45 (15 own + 30 spare) and quiet still gets exactly 15', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget } = fair(['agent-alpha', 'agent-beta'])
      assert.equal(await drain(budget, 'agent-alpha', 1000), 45)
      assert.equal(await drain(budget, 'agent-beta', 60), 15)
    })

    test('fair budget, two callers: the quiet reserve refills at 15/s after a second', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget, clock } = fair(['agent-alpha', 'agent-beta'])
      await drain(budget, 'agent-alpha', 1000)
      assert.equal((await budget.request('agent-beta')).admitted, true)
      assert.equal(await drain(budget, 'agent-beta', 100), 14)
      assert.equal((await budget.request('agent-beta')).admitted, false)
      clock.advance(1)
      await drain(budget, 'agent-alpha', 1000)
      assert.deepEqual(await budget.request('agent-beta'), {
        admitted: true,
        from: 'reserve',
        reason: "admitted from this caller's own reserve",
        left: { reserve: 14, spare: 0 },
      })
    })

    test('fair budget, one caller: 60, the same as naive', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget } = fair(['solo'])
      assert.equal(await drain(budget, 'solo', 1000), 60)
    })

    test('fair budget, three callers: a drains 40, then +0.1 s admits exactly 4 more (fractional refill)', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget, clock } = fair(['a', 'b', 'c'])
      assert.equal(budget.plan.reserveSize, 10)
      assert.equal(budget.plan.spareSize, 30)
      assert.equal(await drain(budget, 'a', 1000), 40)
      clock.advance(0.1)
      assert.equal(await drain(budget, 'a', 1000), 4)
    })

    test('fair budget, three callers at 100 requests each per second: total admitted ≤ 60 + 60 × seconds', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      for (const seconds of [1, 5, 30]) {
        const { budget, clock } = fair(['a', 'b', 'c'])
        let total = 0
        for (let sec = 0; sec < seconds; sec++) {
          for (let i = 0; i < 10; i++) {
            for (const c of ['a', 'b', 'c']) total += await drain(budget, c, 10)
            clock.advance(0.1)
          }
        }
        assert.ok(total <= 60 + 60 * seconds, `${total} admitted in ${seconds}s`)
        assert.ok(total >= 60 * seconds, `${total} admitted in ${seconds}s: the budget should be used, not starved`)
      }
    })

    test('an unknown caller is refused, charged nothing, and creates no capacity', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget } = fair(['agent-alpha', 'agent-beta'])
      assert.deepEqual(await budget.request('agent-gamma'), {
        admitted: false,
        refusal: 'no-reserve',
        reason: 'no reserve is held for this caller',
      })
      assert.deepEqual(await budget.request(''), {
        admitted: false,
        refusal: 'no-reserve',
        reason: 'no reserve is held for this caller',
      })
      assert.equal(await drain(budget, 'agent-alpha', 1000), 45)
    })

    test('codes and reasons name where the unit came from', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget } = fair(['agent-alpha', 'agent-beta'])
      const first = await budget.request('agent-alpha')
      assert.equal(first.admitted && first.from, 'reserve')
      assert.equal(first.reason, "admitted from this caller's own reserve")
      await drain(budget, 'agent-alpha', 14)
      const spare = await budget.request('agent-alpha')
      assert.equal(spare.admitted && spare.from, 'spare')
      assert.equal(spare.reason, 'admitted from the shared spare')
      await drain(budget, 'agent-alpha', 29)
      assert.deepEqual(await budget.request('agent-alpha'), {
        admitted: false,
        refusal: 'spent',
        reason: "this caller's reserve is spent and the spare is empty",
        left: { reserve: 0, spare: 0 },
      })
    })

    test('each decision says what was left right after its own take, in whole units', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget, clock } = fair(['agent-alpha', 'agent-beta'])
      const lefts: unknown[] = []
      for (let i = 0; i < 17; i++) lefts.push((await budget.request('agent-alpha')).left)
      assert.deepEqual(lefts.slice(0, 3), [
        { reserve: 14, spare: 30 },
        { reserve: 13, spare: 30 },
        { reserve: 12, spare: 30 },
      ])
      assert.deepEqual(lefts.slice(14), [
        { reserve: 0, spare: 30 },
        { reserve: 0, spare: 29 },
        { reserve: 0, spare: 28 },
      ])
      // The other caller's reserve is untouched; the spare it sees is the one alpha spent.
      assert.deepEqual((await budget.request('agent-beta')).left, { reserve: 14, spare: 28 })
      // Whole units: 0.1 s refills 1.5 of alpha's reserve and 3 of the spare (capped at 30); one call leaves a reserve
      // of 0.5, shown as 0, and the full spare.
      clock.advance(0.1)
      assert.deepEqual((await budget.request('agent-alpha')).left, { reserve: 0, spare: 30 })
      const naive = naiveBucket(3, 1, clock)
      const naiveLefts = []
      for (let i = 0; i < 4; i++) naiveLefts.push((await naive.request('x')).left)
      assert.deepEqual(naiveLefts, [{ bucket: 2 }, { bucket: 1 }, { bucket: 0 }, { bucket: 0 }])
    })

    test('two budget objects sharing one store and key act as one budget (replicas)', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const store = s.make()
      const clock = manualClock()
      const key = `k${keySeq++}`
      const opts = {
        capacity: 60,
        refillPerSecond: 60,
        callers: ['agent-alpha', 'agent-beta'],
        clock: clock.now,
        store,
        key,
      }
      const replicaA = new FairBudget(opts)
      const replicaB = new FairBudget(opts)
      assert.deepEqual((await replicaA.request('agent-alpha')).left, { reserve: 14, spare: 30 })
      // What replica B reports left includes what replica A spent: it comes from the shared state's one step.
      assert.deepEqual((await replicaB.request('agent-alpha')).left, { reserve: 13, spare: 30 })
      const both = await Promise.all([drain(replicaA, 'agent-alpha', 40), drain(replicaB, 'agent-alpha', 40)])
      assert.equal(both[0] + both[1] + 2, 45)
      assert.equal(await drain(replicaB, 'agent-beta', 60), 15)
    })
  })
}

describe('fair budget construction', () => {
  test('refuses no callers and a reserve fraction outside (0, 1]', () => {
    assert.throws(() => new FairBudget({ capacity: 60, refillPerSecond: 60, callers: [] }), {
      code: 'ERR_GATE_BUDGET_CONFIG',
      message: 'a fair budget needs at least one caller to be fair between',
    })
    for (const f of [0, -0.5, 1.5]) {
      assert.throws(() => new FairBudget({ capacity: 60, refillPerSecond: 60, callers: ['a'], reserveFraction: f }), {
        code: 'ERR_GATE_BUDGET_CONFIG',
        message: `reserve_fraction must be in (0, 1]: ${f}`,
      })
    }
  })

  test('splits capacity and refill as C·f/n, R·f/n and C·(1−f), R·(1−f)', () => {
    const b = new FairBudget({ capacity: 60, refillPerSecond: 60, callers: ['agent-alpha', 'agent-beta'] })
    assert.deepEqual(
      { ...b.plan, callers: [...b.plan.callers] },
      {
        key: 'fair',
        callers: ['agent-alpha', 'agent-beta'],
        reserveSize: 15,
        reserveRate: 15,
        spareSize: 30,
        spareRate: 30,
      },
    )
  })
})

for (const s of stores) {
  describe(`open fair budget (any caller) on the ${s.name}`, () => {
    const open = (policy: BudgetPolicy, clock = manualClock(), store = s.make()) => ({
      clock,
      store,
      budget: new OpenFairBudget({ policy, clock: clock.now, store, key: `open${keySeq++}` }),
    })

    test("the seed's fixture as a policy (reserve 15, pool 30, window 1 s, two listed callers) admits 45 and 15", async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget } = open({
        reserve: 0,
        pool: 30,
        windowSeconds: 1,
        unlistedCallers: 'refuse',
        callers: { 'agent-alpha': { reserve: 15 }, 'agent-beta': { reserve: 15 } },
      })
      assert.equal(await drain(budget, 'agent-alpha', 1000), 45)
      assert.equal(await drain(budget, 'agent-beta', 60), 15)
      assert.deepEqual(await budget.request('agent-gamma'), {
        admitted: false,
        refusal: 'no-reserve',
        reason: 'no reserve is held for this caller',
      })
    })

    test('a greedy caller among 100 others empties only the pool: each of the 100 still gets exactly its reserve', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget } = open({ reserve: 3, pool: 20, windowSeconds: 60 })
      const others = Array.from({ length: 100 }, (_, i) => `user-${i}`)
      assert.equal(await drain(budget, 'greedy', 1000), 23, 'its own 3 and the pool of 20')
      for (const caller of others) {
        // The greedy caller keeps asking between every other caller's calls; it gets nothing more.
        const mine = []
        for (let i = 0; i < 5; i++) {
          mine.push((await budget.request(caller)).admitted)
          assert.equal((await budget.request('greedy')).admitted, false)
        }
        assert.deepEqual(mine, [true, true, true, false, false], caller)
      }
    })

    test("a caller never spends another's reserve, and what is left is its own and the pool's", async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget } = open({ reserve: 2, pool: 3, windowSeconds: 60, callers: { alice: { reserve: 10 } } })
      assert.deepEqual((await budget.request('alice')).left, { reserve: 9, spare: 3 })
      assert.equal(await drain(budget, 'bob', 100), 5)
      assert.deepEqual(await budget.request('bob'), {
        admitted: false,
        refusal: 'spent',
        reason: "this caller's reserve is spent and the spare is empty",
        left: { reserve: 0, spare: 0 },
      })
      assert.equal(await drain(budget, 'alice', 100), 9, 'alice keeps her override, untouched by bob')
      assert.equal(await drain(budget, 'carol', 100), 2)
    })

    test('the reserve and the pool refill completely in one window, fractionally in between', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget, clock } = open({ reserve: 10, pool: 20, windowSeconds: 10 })
      assert.equal(await drain(budget, 'a', 1000), 30)
      clock.advance(0.5) // 0.5 of a reserve unit and 1 pool unit
      assert.equal(await drain(budget, 'a', 1000), 1)
      clock.advance(100)
      assert.equal(await drain(budget, 'a', 1000), 30)
    })

    test('two budget objects sharing one store and key act as one budget (replicas), exactly', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const store = s.make()
      const clock = manualClock()
      const policy = { reserve: 5, pool: 40, windowSeconds: 60 }
      const key = `open${keySeq++}`
      const a = new OpenFairBudget({ policy, clock: clock.now, store, key })
      const b = new OpenFairBudget({ policy, clock: clock.now, store, key })
      const both = await Promise.all([drain(a, 'x', 60), drain(b, 'x', 60), drain(a, 'y', 30), drain(b, 'y', 30)])
      assert.equal(
        both.reduce((sum, n) => sum + n, 0),
        50,
        'two reserves of 5 and the pool of 40, nothing more',
      )
      assert.equal(both[2] + both[3] >= 5, true, 'y got at least its own reserve, whatever x took')
    })
  })
}

describe('open fair budget: state stays bounded', () => {
  test('memory: a caller is released once its reserve has refilled, and at most maxCallers are held', async () => {
    const clock = manualClock()
    const store = new MemoryBudgetStore({ maxCallers: 5 })
    const budget = new OpenFairBudget({ policy: { reserve: 4, pool: 0, windowSeconds: 2 }, clock: clock.now, store })
    for (let i = 0; i < 3; i++) await budget.request(`c${i}`)
    assert.equal(store.heldCallers('open'), 3)
    clock.advance(0.5) // each reserve is back to 4 after 0.5 s (rate 2/s, one unit spent)
    await budget.request('c9')
    assert.equal(store.heldCallers('open'), 1, 'the three full ones were released; only c9 is held')
    assert.equal(await drain(budget, 'c0', 100), 4, 'a released caller starts full, exactly what it had refilled to')
    for (let i = 10; i < 20; i++) await budget.request(`c${i}`)
    assert.equal(store.heldCallers('open'), 5)
    assert.equal(store.releasedEarly, 7)
  })

  test('an unlisted caller under a "refuse" policy creates no state and spends nothing', async () => {
    const store = new MemoryBudgetStore()
    const budget = new OpenFairBudget({
      policy: { reserve: 0, pool: 5, windowSeconds: 1, unlistedCallers: 'refuse', callers: { a: { reserve: 1 } } },
      clock: manualClock().now,
      store,
    })
    for (let i = 0; i < 50; i++) await budget.request(`stranger-${i}`)
    assert.equal(store.heldCallers('open'), 0)
    assert.equal(await drain(budget, 'a', 100), 6)
  })

  test('Redis: keys exist only for callers not yet refilled, and on the wall clock expire when they would be', async (t) => {
    if (probe.skip) return t.skip(probe.skip)
    const redis = probe.redis as NonNullable<RedisProbe['redis']>
    const prefix = `${probe.prefix}bound:`
    const store = new RedisBudgetStore(redis, { prefix })
    const budget = new OpenFairBudget({
      policy: { reserve: 10, pool: 100, windowSeconds: 10 },
      clock: wallClock,
      store,
    })
    for (let i = 0; i < 20; i++) await budget.request(`caller-${i}`)
    const keys = (await redis.keys(`${prefix}open:*`)).sort()
    assert.equal(keys.length, 20, 'one key per caller charged (the pool is still full: no key)')
    for (const key of keys) {
      const ttl = await redis.pttl(key)
      // One unit refills in 1 s (10 per 10 s), plus the one-second allowance for replicas' clocks.
      assert.ok(ttl > 0 && ttl <= 2000, `${key} expires in ${ttl} ms`)
    }
    const frozen = new OpenFairBudget({
      policy: { reserve: 10, pool: 100, windowSeconds: 10 },
      clock: manualClock().now,
      store: new RedisBudgetStore(redis, { prefix, ttlMs: 60_000 }),
      key: 'frozen',
    })
    await frozen.request('caller-f')
    const ttl = await redis.pttl(`${prefix}open:frozen:c:caller-f`)
    assert.ok(ttl > 2000 && ttl <= 60_000, 'a clock that is not real time keeps state for the fixed idle time')
  })
})

describe('budget policy checks', () => {
  const bad: Array<[unknown, RegExp]> = [
    [[], /must be a JSON object/],
    [{ reserve: 1, pool: 1, windowSeconds: 1, extra: 1 }, /unknown field in the budget policy/],
    [{ reserve: -1, pool: 1, windowSeconds: 1 }, /^reserve must be an integer from 0/],
    [{ reserve: 1.5, pool: 1, windowSeconds: 1 }, /^reserve must be an integer/],
    [{ reserve: 1, pool: '3', windowSeconds: 1 }, /^pool must be an integer/],
    [{ reserve: 1, pool: 1, windowSeconds: 0 }, /^windowSeconds must be an integer from 1 to 86400/],
    [{ reserve: 1, pool: 1 }, /^windowSeconds must be/],
    [{ reserve: 1, pool: 1, windowSeconds: 1, unlistedCallers: 'maybe' }, /^unlistedCallers must be/],
    [{ reserve: 1, pool: 1, windowSeconds: 1, callers: { bob: { reserve: -2 } } }, /^callers \(entry 1\)\.reserve/],
    [{ reserve: 1, pool: 1, windowSeconds: 1, callers: { bob: { limit: 2 } } }, /^callers \(entry 1\) must be/],
    [{ reserve: 0, pool: 0, windowSeconds: 1 }, /would admit nothing/],
    [{ reserve: 1, pool: 0, windowSeconds: 1, unlistedCallers: 'refuse' }, /needs at least one caller/],
  ]
  for (const [policy, message] of bad) {
    test(`refuses ${JSON.stringify(policy)}`, () => {
      assert.throws(
        () => budgetPolicy(policy),
        (error: Error & { code?: string }) => {
          assert.equal(error.code, 'ERR_GATE_BUDGET_CONFIG')
          assert.match(error.message, message)
          assert.doesNotMatch(error.message, /bob/, 'a caller is named by its place, never echoed')
          return true
        },
      )
    })
  }
})
