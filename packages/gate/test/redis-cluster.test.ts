// The Redis budget and session stores on a Redis Cluster of the test's own (three masters with a replica each, on
// free loopback ports): every script names keys of one slot, so each charge and each session operation is one
// atomic step on one shard (a script across slots would fail with CROSSSLOT); budgets spread over the shards; each
// budget's epoch key lives beside its state, so a shard that lost its data is noticed for the budgets on it.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { NO_REDIS_HA, type RedisClusterSet, redisCli, startRedisCluster } from '@tollgate/test-support'
import { Cluster } from 'ioredis'
import {
  type BudgetStoreEvent,
  budgetClusterOptions,
  FairBudget,
  GateConfigError,
  MemoryBudgetStore,
  manualClock,
  NaiveBucket,
  OpenFairBudget,
  RedisBudgetStore,
  RedisSessionStore,
} from '../src/index.ts'

describe('the Redis stores on a Redis Cluster', { skip: NO_REDIS_HA }, () => {
  let cluster: RedisClusterSet
  let client: Cluster
  before(async () => {
    cluster = await startRedisCluster()
    const nodes = cluster.nodeList.split(',').map((a) => ({ host: '127.0.0.1', port: Number(a.split(':')[1]) }))
    client = new Cluster(nodes, budgetClusterOptions())
  })
  after(async () => {
    client?.disconnect()
    await cluster?.dispose()
  })

  test('fair, naive and open budgets on several shards charge exactly as the memory store does', async () => {
    const clock = manualClock()
    const events: BudgetStoreEvent[] = []
    const redis = new RedisBudgetStore(client, { prefix: 'arith:', onEvent: (e) => events.push(e) })
    await redis.open()
    const memory = new MemoryBudgetStore()
    const keys = Array.from({ length: 6 }, (_, i) => `b${i}`)
    // The budgets' slots are served by more than one master: the layout spreads budgets, not one budget's keys.
    const masters = new Set(await Promise.all(keys.map((k) => cluster.masterOf(`{open:${k}}`))))
    assert.ok(masters.size >= 2, 'six budgets on at least two shards')
    const policy = { reserve: 3, pool: 4, windowSeconds: 10 }
    for (const key of keys) {
      const make = (store: RedisBudgetStore | MemoryBudgetStore) => ({
        open: new OpenFairBudget({ policy, clock: clock.now, store, key }),
        fair: new FairBudget({ capacity: 6, refillPerSecond: 1, callers: ['a', 'b'], clock: clock.now, store, key }),
        naive: new NaiveBucket({ capacity: 5, refillPerSecond: 1, clock: clock.now, store, key }),
      })
      const [r, m] = [make(redis), make(memory)]
      const seen: Array<[boolean, boolean]> = []
      for (const caller of ['a', 'b', 'a', 'c', 'a', 'a', 'a', 'b', 'a', 'b', 'c', 'a']) {
        for (const kind of ['open', 'fair', 'naive'] as const) {
          const who = kind === 'fair' && caller === 'c' ? 'a' : caller
          seen.push([(await r[kind].request(who)).admitted, (await m[kind].request(who)).admitted])
        }
        clock.advance(0.25)
      }
      for (const [i, [got, want]] of seen.entries()) assert.equal(got, want, `${key}: request ${i}`)
      assert.ok(
        seen.some(([got]) => !got),
        'some requests were refused: the budgets were charged',
      )
    }
    assert.deepEqual(events, [], 'no state lost, no epoch changed')
  })

  test("a shard that lost its data is noticed for the budgets on it: reseeded, or refused until the budget's epoch key is written", async () => {
    const clock = manualClock()
    const events: BudgetStoreEvent[] = []
    const reseed = new RedisBudgetStore(client, { prefix: 'lost:', onEvent: (e) => events.push(e) })
    const refused: BudgetStoreEvent[] = []
    const strict = new RedisBudgetStore(client, {
      prefix: 'lost:',
      onLostState: 'refuse',
      onEvent: (e) => refused.push(e),
    })
    const policy = { reserve: 2, pool: 0, windowSeconds: 10 }
    const a = new OpenFairBudget({ policy, clock: clock.now, store: reseed, key: 'x' })
    const b = new OpenFairBudget({ policy, clock: clock.now, store: strict, key: 'x' })
    assert.equal((await a.request('alice')).admitted, true)
    assert.equal((await b.request('alice')).admitted, true)
    assert.equal((await a.request('alice')).admitted, false, 'two replicas share the reserve of 2')

    await redisCli(await cluster.masterOf('{open:x}'), 'FLUSHALL')
    assert.equal((await a.request('alice')).admitted, true, 'reseeded: alice starts full again')
    assert.deepEqual(events, [{ kind: 'state-lost', action: 'reseeded' }])
    // The other replica follows the new epoch (it saw the old one): noticed as a change, not a loss.
    assert.equal((await b.request('alice')).admitted, true)
    assert.deepEqual(refused, [{ kind: 'epoch-changed' }])

    await redisCli(await cluster.masterOf('{open:x}'), 'FLUSHALL')
    await assert.rejects(b.request('alice'), { code: 'ERR_GATE_BUDGET_STORE' })
    await assert.rejects(b.request('alice'), { code: 'ERR_GATE_BUDGET_STORE' })
    assert.deepEqual(refused.slice(1), [{ kind: 'state-lost', action: 'refusing' }], 'said once')
    await redisCli(await cluster.masterOf('{open:x}'), 'SET', 'lost:{open:x}:epoch', 'acknowledged')
    assert.equal((await b.request('alice')).admitted, true, 'acknowledged: served again')
  })

  test('2025-era sessions: open, touch, close and the caps hold across the cluster, all in one slot', async () => {
    const store = new RedisSessionStore(client, 'sessions:')
    const caps = { idleMs: 60_000, maxSessions: 3, maxPerOwner: 2 }
    const now = Date.now()
    assert.equal(await store.open('s1', 'alice', now, caps), true)
    assert.equal(await store.open('s2', 'alice', now + 1, caps), true)
    // A third for alice closes her least recently seen (s1).
    assert.equal(await store.open('s3', 'alice', now + 2, caps), true)
    assert.equal(await store.touch('s1', now + 3, caps.idleMs), false)
    assert.equal(await store.touch('s2', now + 3, caps.idleMs), true)
    assert.equal(await store.open('s4', 'bob', now + 4, caps), true)
    assert.equal(await store.open('s5', 'carol', now + 5, caps), false, 'at most three open')
    assert.equal(await store.countOpen(now + 5, caps.idleMs), 3)
    assert.equal(await store.close('s4'), true)
    assert.equal(await store.close('s4'), false)
    assert.equal(await store.open('s5', 'carol', now + 6, caps), true)
    const slots = new Set<string>()
    for (const key of ['{sessions:}all', '{sessions:}o:alice', '{sessions:}s:s5'])
      slots.add(await redisCli(Number(cluster.nodeList.split(',')[0]?.split(':')[1]), 'CLUSTER', 'KEYSLOT', key))
    assert.equal(slots.size, 1)
  })

  test('replicas 1 (WAIT) on a Cluster: sent to the node serving the budget, whose replica acknowledges', async () => {
    const clock = manualClock()
    const store = new RedisBudgetStore(client, { prefix: 'wait:', replicas: 1 })
    const policy = { reserve: 2, pool: 0, windowSeconds: 10 }
    for (const key of ['w0', 'w1', 'w2', 'w3']) {
      const budget = new OpenFairBudget({ policy, clock: clock.now, store, key })
      assert.deepEqual(
        [
          (await budget.request('a')).admitted,
          (await budget.request('a')).admitted,
          (await budget.request('a')).admitted,
        ],
        [true, true, false],
      )
    }
    // The WAIT goes to the node that ran the script: with that shard's replica frozen the call is refused (a WAIT
    // sent to any other node, with no write of this connection to wait for, would answer at once).
    const master = await cluster.masterOf('{open:wz}')
    const nodes = await redisCli(master, 'CLUSTER', 'NODES')
    const myId = nodes
      .split('\n')
      .find((l) => l.includes('myself'))
      ?.split(' ')[0] as string
    const replicaPort = Number(/:(\d+)@/.exec(nodes.split('\n').find((l) => l.includes(`slave ${myId}`)) ?? '')?.[1])
    const replica = cluster.nodes.find((n) => n.port === replicaPort)?.child
    assert.ok(replica !== undefined, 'the shard has a replica')
    const frozen = new OpenFairBudget({ policy, clock: clock.now, store, key: 'wz' })
    replica.kill('SIGSTOP')
    try {
      await assert.rejects(frozen.request('a'), { code: 'ERR_GATE_BUDGET_STORE' })
    } finally {
      replica.kill('SIGCONT')
    }
    // Asking for more replicas than a shard has refuses the call.
    const greedy = new RedisBudgetStore(client, { prefix: 'wait:', replicas: 2 })
    const budget = new OpenFairBudget({ policy, clock: clock.now, store: greedy, key: 'w9' })
    await assert.rejects(budget.request('a'), { code: 'ERR_GATE_BUDGET_STORE' })
  })

  test('a prefix holding a brace is refused on a Cluster (it would move keys to other slots)', () => {
    assert.throws(() => new RedisBudgetStore(client, { prefix: 'a{b}:' }), GateConfigError)
    assert.throws(() => new RedisSessionStore(client, 'a}:'), GateConfigError)
  })
})
