// The Redis stores send each Lua script by its SHA1 (EVALSHA), its text (EVAL) only on a connection's first call or
// when Redis answers NOSCRIPT. On redis-servers of the test's own (SCRIPT FLUSH is run on them; the shared Redis on
// 6379 is never touched): counted with INFO commandstats, and after SCRIPT FLUSH the next charge runs exactly once
// (the budget arithmetic shows one unit taken), with its WAIT still after it when replicas must acknowledge.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { freeLoopbackPort, NO_REDIS_HA } from '@tollgate/test-support'
import { Redis } from 'ioredis'
import { budgetRedisOptions, RedisBudgetStore, RedisSessionStore } from '../src/index.ts'

interface Server {
  port: number
  child: ChildProcess
}

async function startServer(dir: string, extra: string[] = []): Promise<Server> {
  const port = await freeLoopbackPort()
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
  const child = spawn('redis-server', [...args, ...extra], { stdio: 'ignore' })
  const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null })
  probe.on('error', () => {})
  for (let i = 0; i < 200; i++) {
    try {
      await probe.connect()
      if ((await probe.ping()) === 'PONG') break
    } catch {
      await sleep(20)
    }
  }
  probe.disconnect()
  return { port, child }
}

async function stopServer(server: Server | undefined): Promise<void> {
  const child = server?.child
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise((r) => child.once('exit', r))
  child.kill('SIGCONT')
  child.kill('SIGKILL')
  await gone
}

/** calls of EVAL and EVALSHA so far (INFO commandstats). */
async function scriptCalls(admin: Redis): Promise<{ eval: number; evalsha: number }> {
  const info = await admin.info('commandstats')
  const calls = (name: string) => Number(new RegExp(`^cmdstat_${name}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0)
  return { eval: calls('eval'), evalsha: calls('evalsha') }
}

/** Until the replica has acknowledged the master's whole replication stream (it acks once a second). */
async function caughtUp(master: Redis): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const info = await master.info('replication')
    const offset = /^master_repl_offset:(\d+)/m.exec(info)?.[1]
    if (offset !== undefined && new RegExp(`^slave0:.*,offset=${offset},`, 'm').test(info)) return
    await sleep(50)
  }
  throw new Error('the replica never caught up')
}

async function ready(redis: Redis): Promise<Redis> {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve))
  return redis
}

describe('Redis stores send scripts by SHA1 (EVALSHA) and reload them on NOSCRIPT', { skip: NO_REDIS_HA }, () => {
  let dir: string
  let server: Server
  let admin: Redis
  let client: Redis
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gate-evalsha-'))
    server = await startServer(dir)
    admin = await ready(new Redis({ host: '127.0.0.1', port: server.port }))
    client = await ready(new Redis({ host: '127.0.0.1', port: server.port, ...budgetRedisOptions() }))
  })
  after(async () => {
    client?.disconnect()
    admin?.disconnect()
    await stopServer(server)
    rmSync(dir, { recursive: true, force: true })
  })

  test('budget: after the first charge only EVALSHA; after SCRIPT FLUSH the next charge is taken exactly once', async () => {
    const store = new RedisBudgetStore(client, { prefix: 'sha:' })
    await store.open()
    const plan = { key: 'k', capacity: 100, rate: 0 }
    assert.equal((await store.takeNaive(plan, 0)).level, 99, 'the first charge (EVAL: loads the script)')
    const before = await scriptCalls(admin)
    for (let i = 0; i < 5; i++) await store.takeNaive(plan, 0)
    const later = await scriptCalls(admin)
    assert.equal(later.evalsha - before.evalsha, 5, 'five charges, five EVALSHA')
    assert.equal(later.eval - before.eval, 0, 'no EVAL once the script is loaded')

    assert.equal(await admin.script('FLUSH'), 'OK')
    const taken = await store.takeNaive(plan, 0)
    assert.equal(taken.admitted, true)
    assert.equal(taken.level, 93, 'one unit taken by the charge after SCRIPT FLUSH: 100 - 7, not 100 - 8')
    assert.equal(await client.hget('sha:naive:k', 'level'), '93')
    const reloaded = await scriptCalls(admin)
    assert.equal(reloaded.eval - later.eval, 1, 'NOSCRIPT, then one EVAL (which loads the script again)')
    await store.takeNaive(plan, 0)
    const last = await scriptCalls(admin)
    assert.deepEqual([last.eval - reloaded.eval, last.evalsha - reloaded.evalsha], [0, 1], 'then EVALSHA again')
    assert.equal(await client.hget('sha:naive:k', 'level'), '92')
  })

  test('open budget: EVALSHA per charge, and one unit after SCRIPT FLUSH', async () => {
    const store = new RedisBudgetStore(client, { prefix: 'sha-open:' })
    const plan = { key: 'o', poolSize: 0, poolRate: 0, realTime: false }
    const share = { size: 10, rate: 0 }
    await store.takeOpen(plan, 'alice', share, 0)
    const before = await scriptCalls(admin)
    assert.equal((await store.takeOpen(plan, 'alice', share, 0)).reserve, 8)
    await admin.script('FLUSH')
    const taken = await store.takeOpen(plan, 'alice', share, 0)
    assert.deepEqual([taken.from, taken.reserve], ['reserve', 7], 'one unit after SCRIPT FLUSH')
    const later = await scriptCalls(admin)
    assert.equal(later.eval - before.eval, 1, 'only the reload after SCRIPT FLUSH is an EVAL')
  })

  test('sessions: EVALSHA after the first call; after SCRIPT FLUSH a session opens once', async () => {
    const sessions = new RedisSessionStore(client, 'sha-sessions:')
    const caps = { idleMs: 60_000, maxSessions: 10, maxPerOwner: 10 }
    assert.equal(await sessions.open('s1', 'alice', 1000, caps), true)
    const before = await scriptCalls(admin)
    assert.equal(await sessions.touch('s1', 1001, caps.idleMs), true)
    assert.equal(await sessions.open('s2', 'alice', 1002, caps), true)
    const later = await scriptCalls(admin)
    // touch's script is new on this connection: its first call is an EVAL; open's is not.
    assert.deepEqual([later.eval - before.eval, later.evalsha - before.evalsha], [1, 1])
    await admin.script('FLUSH')
    assert.equal(await sessions.open('s3', 'alice', 1003, caps), true)
    assert.equal(await client.zcard('sha-sessions:all'), 3, 'three sessions: the one after SCRIPT FLUSH once')
    assert.equal(await sessions.close('s3'), true)
    assert.equal(await client.zcard('sha-sessions:all'), 2)
  })
})

describe('RedisBudgetStore replicas: after SCRIPT FLUSH the reloaded charge is still followed by its WAIT', {
  skip: NO_REDIS_HA,
}, () => {
  let dir: string
  let master: Server
  let replica: Server
  let admin: Redis
  let client: Redis
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gate-evalsha-wait-'))
    master = await startServer(dir, ['--repl-diskless-sync-delay', '0', '--repl-ping-replica-period', '60'])
    replica = await startServer(dir, ['--replicaof', '127.0.0.1', String(master.port)])
    admin = await ready(new Redis({ host: '127.0.0.1', port: master.port }))
    await admin.set('sha-wait:ready', '1')
    for (let i = 0; i < 50; i++) if ((await admin.wait(1, 200)) === 1) break
    client = await ready(new Redis({ host: '127.0.0.1', port: master.port, ...budgetRedisOptions() }))
  })
  after(async () => {
    client?.disconnect()
    admin?.disconnect()
    await stopServer(replica)
    await stopServer(master)
    rmSync(dir, { recursive: true, force: true })
  })

  test('EVALSHA + WAIT; after SCRIPT FLUSH one unit, and with the replica frozen the reloaded charge is refused', async () => {
    const store = new RedisBudgetStore(client, { prefix: 'sha-wait:', replicas: 1 })
    const plan = { key: 'w', capacity: 100, rate: 0 }
    assert.equal((await store.takeNaive(plan, 0)).level, 99, 'first charge: NOSCRIPT, then EVAL + WAIT')
    const before = await scriptCalls(admin)
    assert.equal((await store.takeNaive(plan, 0)).level, 98)
    const later = await scriptCalls(admin)
    assert.deepEqual([later.eval - before.eval, later.evalsha - before.evalsha], [0, 1])

    await admin.script('FLUSH')
    assert.equal((await store.takeNaive(plan, 0)).level, 97, 'one unit after SCRIPT FLUSH')

    // Reloaded with its WAIT: a frozen replica refuses it (the charge stays: one unit, never two). The replica has
    // acknowledged the master's whole stream before it freezes, so a WAIT sent before the reloaded script (as
    // ioredis's own NOSCRIPT retry inside a pipeline would have it) answers 1 at once and the charge is admitted.
    await admin.script('FLUSH')
    await caughtUp(admin)
    replica.child.kill('SIGSTOP')
    try {
      await assert.rejects(store.takeNaive(plan, 0), { code: 'ERR_GATE_BUDGET_STORE' })
    } finally {
      replica.child.kill('SIGCONT')
    }
    assert.equal(await admin.hget('sha-wait:naive:w', 'level'), '96', 'the refused charge was run once')
    assert.equal((await store.takeNaive(plan, 0)).level, 95, 'thawed: admitted again')
  })
})
