// RedisBudgetStore's `replicas` (Redis WAIT): a charge is admitted only once that many replicas hold it. On a master
// with one replica of the test's own (the shared Redis on 6379 is never touched): with the replica frozen (SIGSTOP)
// a charge is refused, with `replicas: 0` the same charge is admitted; thawed, charges are admitted again.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { NO_REDIS_HA, type RedisSentinelSet, startRedisSentinelSet } from '@tollgate/test-support'
import { Redis } from 'ioredis'
import { budgetRedisOptions, GateConfigError, manualClock, OpenFairBudget, RedisBudgetStore } from '../src/index.ts'

describe('RedisBudgetStore replicas: a charge admitted only once a replica holds it', { skip: NO_REDIS_HA }, () => {
  let set: RedisSentinelSet
  let master: Redis
  before(async () => {
    set = await startRedisSentinelSet()
    master = new Redis({ host: '127.0.0.1', port: await set.masterPort(), ...budgetRedisOptions() })
    if (master.status !== 'ready') await new Promise((resolve) => master.once('ready', resolve))
  })
  after(async () => {
    master?.disconnect()
    await set?.dispose()
  })

  test('a frozen replica: refused with replicas 1, admitted with replicas 0; thawed: admitted again', async () => {
    const clock = manualClock()
    const policy = { reserve: 100, pool: 0, windowSeconds: 100 }
    const budget = (replicas: number) =>
      new OpenFairBudget({
        policy,
        clock: clock.now,
        store: new RedisBudgetStore(master, { prefix: 'wait:', replicas }),
      })
    const waiting = budget(1)
    const plain = budget(0)
    assert.equal((await waiting.request('alice')).admitted, true, 'the replica acknowledges')
    const replica = set.nodes[1]?.child
    replica?.kill('SIGSTOP')
    try {
      await assert.rejects(waiting.request('alice'), { code: 'ERR_GATE_BUDGET_STORE' })
      assert.equal((await plain.request('alice')).admitted, true, 'without WAIT the master alone admits')
    } finally {
      replica?.kill('SIGCONT')
    }
    assert.equal((await waiting.request('alice')).admitted, true, 'thawed: acknowledged again')
  })

  test('replicas must be a whole number from 0', () => {
    assert.throws(() => new RedisBudgetStore(master, { replicas: -1 }), GateConfigError)
    assert.throws(() => new RedisBudgetStore(master, { replicas: 1.5 }), GateConfigError)
  })
})
