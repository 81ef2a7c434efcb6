// The digest's §8.3 numbers as literal tests, on an injected frozen clock, run against every BudgetStore.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { probeRedis, type RedisProbe } from '@tollgate/test-support'
import {
  type BudgetStore,
  FairBudget,
  type ManualClock,
  MemoryBudgetStore,
  manualClock,
  NaiveBucket,
  RedisBudgetStore,
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
        reason: 'no reserve is held for this caller',
      })
      assert.deepEqual(await budget.request(''), { admitted: false, reason: 'no reserve is held for this caller' })
      assert.equal(await drain(budget, 'agent-alpha', 1000), 45)
    })

    test('reasons name where the unit came from', async (t) => {
      if (s.skip()) return t.skip(s.skip())
      const { budget } = fair(['agent-alpha', 'agent-beta'])
      assert.equal((await budget.request('agent-alpha')).reason, "admitted from this caller's own reserve")
      await drain(budget, 'agent-alpha', 14)
      assert.equal((await budget.request('agent-alpha')).reason, 'admitted from the shared spare')
      await drain(budget, 'agent-alpha', 29)
      assert.deepEqual(await budget.request('agent-alpha'), {
        admitted: false,
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
