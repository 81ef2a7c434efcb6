// A highly available budget Redis losing its master under load: quenchz (its CLI as its own process, --jwks-url,
// every sub a caller) on a Redis Sentinel set (master, replica, three sentinels) and on a Redis Cluster (three
// masters with a replica each), both started by the test on ports of its own. Four callers call a charged tool in
// closed loops over real HTTP; the master holding the budget is killed with SIGKILL. Every answer must be a served
// call or 503 + Retry-After (never another error, never a call served while the budget could not be charged); once
// the replica is promoted calls are served again by themselves; afterwards the charges recorded on the new master
// are compared with the calls served. The budget clock is frozen and the pool empty, so each caller's level only
// goes down by exactly one per charge. Replication is asynchronous: a charge the master acknowledged but had not
// yet sent to its replica is lost with it, at most one per caller in flight at the kill (the documented bound).
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import {
  NO_REDIS_HA,
  type RedisClusterSet,
  type RedisSentinelSet,
  redisCli,
  startRedisCluster,
  startRedisSentinelSet,
} from '@tollgate/test-support'
import { type CliProcess, startCliProcess } from './support/cli-process.ts'
import { type JwksServer, startJwksServer, TEST_ISSUER } from './support/jwks-server.ts'
import { legacyInitialize, modernToolCall } from './support/raw-mcp.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'
import { until } from './support/wait.ts'

const RESOURCE = 'https://quenchz.invalid/mcp'
/** Each caller's reserve: far more than the test spends, so every call is charged and none refused for budget. */
const RESERVE = 1_000_000
const CALLERS = ['c0', 'c1', 'c2', 'c3']
const PREFIX = 'ha:'
const TIMEOUT_MS = 300

const { scratch, empty } = scratchWithEmptyRecordings('quenchz-failover-')
after(() => rmSync(scratch, { recursive: true, force: true }))

interface Tally {
  served: Record<string, number>
  /** 503 answers with Retry-After and the budget-unavailable error. */
  refused: number
  /** Anything else: must stay empty. */
  unexpected: string[]
  /** performance.now() when each served call was sent, and when each refused one was answered. */
  servedSentAt: number[]
  refusedAt: number[]
}

const newTally = (): Tally => ({ served: {}, refused: 0, unexpected: [], servedSentAt: [], refusedAt: [] })

async function call(url: string, token: string, tally: Tally, sub: string): Promise<void> {
  const sentAt = performance.now()
  let res: Response
  try {
    res = await fetch(url, { method: 'POST', ...modernToolCall(token, 1, 'calendar.why', { day: '2026-04-03' }) })
  } catch (error) {
    tally.unexpected.push(`no answer: ${(error as Error).message}`)
    return
  }
  const body = (await res.json()) as {
    result?: { isError?: boolean }
    error?: { code: number; data?: { reason?: string; retryAfterSeconds?: number } }
  }
  if (res.status === 200 && body.result !== undefined && body.result.isError !== true) {
    tally.served[sub] = (tally.served[sub] ?? 0) + 1
    tally.servedSentAt.push(sentAt)
  } else if (
    res.status === 503 &&
    Number(res.headers.get('retry-after')) >= 1 &&
    body.error?.data?.reason === 'budget-unavailable'
  ) {
    tally.refused++
    tally.refusedAt.push(performance.now())
  } else {
    tally.unexpected.push(`${res.status} ${JSON.stringify(body)}`)
  }
}

interface FailoverFigures {
  served: number
  charged: number
  refused: number
  /** From the kill to the first served call sent after it, ms. */
  switchMs: number
  /** From the kill to the last refused answer, ms. */
  lastRefusedMs: number
}

/**
 * Runs the callers, kills the master once they are served, waits for the promotion and for calls to be served
 * again, stops, and returns the figures; `charged(sub)` reads a caller's recorded charges from the new master.
 */
async function failoverUnderLoad(
  quenchz: CliProcess,
  jwks: JwksServer,
  kill: () => Promise<void>,
  promoted: () => Promise<void>,
  charged: (sub: string) => Promise<number>,
): Promise<FailoverFigures> {
  const tokens = await Promise.all(CALLERS.map((sub) => jwks.sign(sub, RESOURCE)))
  const tally = newTally()
  let stop = false
  const loops = CALLERS.map(async (sub, i) => {
    // Bounded: a server that neither serves nor refuses cannot keep the loop going past the waits below.
    for (let n = 0; n < 100_000 && !stop; n++) await call(quenchz.url, tokens[i] as string, tally, sub)
  })
  const total = () => Object.values(tally.served).reduce((a, b) => a + b, 0)
  let killedAt = 0
  try {
    await until('the callers are served before the kill', async () => total() >= 40)
    killedAt = performance.now()
    await kill()
    await promoted()
    const servedAfter = () => tally.servedSentAt.filter((t) => t > killedAt).length
    await until('calls are served again after the promotion', async () => servedAfter() >= 40)
  } finally {
    stop = true
    await Promise.all(loops)
  }
  assert.deepEqual(tally.unexpected, [], 'every answer is a served call or 503 + Retry-After')
  let recorded = 0
  for (const sub of CALLERS) recorded += await charged(sub)
  const firstServedAfter = Math.min(...tally.servedSentAt.filter((t) => t > killedAt))
  return {
    served: total(),
    charged: recorded,
    refused: tally.refused,
    switchMs: Math.round(firstServedAfter - killedAt),
    lastRefusedMs: Math.round(Math.max(killedAt, ...tally.refusedAt) - killedAt),
  }
}

/** What one caller's level says it was charged (no key: never charged, or the key was lost). */
async function chargesIn(port: number, key: string): Promise<number> {
  const v = await redisCli(port, 'HGET', key, 'v')
  return v === '' ? 0 : RESERVE - Number(v)
}

/** The checks both failovers share, and one line of figures for the README. */
function judge(what: string, f: FailoverFigures): void {
  console.log(`${what}: ${JSON.stringify(f)}`)
  assert.ok(f.refused > 0, 'the kill was felt: some calls were refused while the master was gone')
  // Lost charges: acknowledged by the old master, never replicated; at most the calls in flight at the kill.
  assert.ok(f.served - f.charged <= CALLERS.length, `served ${f.served}, charged ${f.charged}`)
  // Extra charges: a call charged whose answer was lost with the connection (refused, never served); same bound.
  assert.ok(f.charged - f.served <= CALLERS.length, `served ${f.served}, charged ${f.charged}`)
}

const common = (jwks: JwksServer) => [
  ...['--port', '0', '--budget-clock', 'frozen', '--jwks-url', jwks.url, '--issuer', TEST_ISSUER],
  ...['--source', 'recordings', '--recordings', empty, '--budget-prefix', PREFIX],
  ...['--caller-reserve', String(RESERVE), '--budget-pool', '0', '--budget-redis-timeout-ms', String(TIMEOUT_MS)],
]

/** A 2025-era session opened now; `call` is a tools/call on it, resolving with the HTTP status. */
async function legacySession(url: string, token: string): Promise<() => Promise<number>> {
  const init = await legacyInitialize(url, token, 0)
  assert.equal(init.status, 200)
  await init.arrayBuffer()
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
    'mcp-session-id': init.headers.get('mcp-session-id') as string,
    'mcp-protocol-version': '2025-06-18',
  }
  const post = async (body: object) => {
    const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
    await res.arrayBuffer()
    return res.status
  }
  assert.equal(await post({ jsonrpc: '2.0', method: 'notifications/initialized' }), 202)
  const params = { name: 'calendar.why', arguments: { day: '2026-04-03' } }
  return () => post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params })
}

describe('the budget on Redis Sentinel: the master killed under load', { skip: NO_REDIS_HA }, () => {
  let set: RedisSentinelSet
  let jwks: JwksServer
  let quenchz: CliProcess
  before(async () => {
    set = await startRedisSentinelSet()
    jwks = await startJwksServer()
    const flags = ['--budget-redis-sentinels', set.sentinelList, '--budget-redis-master', set.master]
    quenchz = await startCliProcess([...common(jwks), ...flags], scratch)
  })
  after(async () => {
    await quenchz?.stop()
    await set?.dispose()
    await jwks?.close()
  })

  test('calls during the switch are 503 + Retry-After, none served uncharged; served again after the promotion, the accounting within the bound; a 2025-era session survives; a lost epoch is noticed', async () => {
    const session = await legacySession(quenchz.url, await jwks.sign('legacy', RESOURCE))
    assert.equal(await session(), 200)
    const old = await set.masterPort()
    let now = old
    const figures = await failoverUnderLoad(
      quenchz,
      jwks,
      async () => {
        await set.nodes.find((n) => n.port === old)?.kill()
      },
      async () => {
        now = await set.promotedFrom(old)
      },
      (sub) => chargesIn(now, `${PREFIX}open:open:c:${sub}`),
    )
    judge('sentinel', figures)
    assert.equal(await session(), 200, 'the session was replicated before the kill')
    // The promoted replica losing everything (as a failover to a replica that restarted empty would): noticed.
    await redisCli(now, 'FLUSHALL')
    await until('the lost state is noticed', async () => {
      await call(quenchz.url, await jwks.sign('c0', RESOURCE), newTally(), 'c0')
      return quenchz.logs.some((l) => /lost its state/.test(String(l.msg)))
    })
  })
})

describe('the budget on Redis Sentinel with --budget-redis-replicas 1: the master killed under load', {
  skip: NO_REDIS_HA,
}, () => {
  let set: RedisSentinelSet
  let jwks: JwksServer
  let quenchz: CliProcess
  before(async () => {
    set = await startRedisSentinelSet({ replicas: 2 })
    jwks = await startJwksServer()
    const flags = ['--budget-redis-sentinels', set.sentinelList, '--budget-redis-master', set.master]
    quenchz = await startCliProcess([...common(jwks), ...flags, '--budget-redis-replicas', '1'], scratch)
  })
  after(async () => {
    await quenchz?.stop()
    await set?.dispose()
    await jwks?.close()
  })

  test('every charge is on the replica before its call is served: after the promotion no charge is missing', async () => {
    const old = await set.masterPort()
    let now = old
    const figures = await failoverUnderLoad(
      quenchz,
      jwks,
      async () => {
        await set.nodes.find((n) => n.port === old)?.kill()
      },
      async () => {
        now = await set.promotedFrom(old)
      },
      (sub) => chargesIn(now, `${PREFIX}open:open:c:${sub}`),
    )
    judge('sentinel, WAIT 1', figures)
    // Exact from below: a call is served only once the replica that is now the master held its charge.
    assert.ok(figures.charged >= figures.served, `served ${figures.served}, charged ${figures.charged}`)
  })
})

describe('the budget on a Redis Cluster: the master of its slot killed under load', { skip: NO_REDIS_HA }, () => {
  let cluster: RedisClusterSet
  let jwks: JwksServer
  let quenchz: CliProcess
  before(async () => {
    cluster = await startRedisCluster()
    jwks = await startJwksServer()
    quenchz = await startCliProcess([...common(jwks), '--budget-redis-cluster', cluster.nodeList], scratch)
  })
  after(async () => {
    await quenchz?.stop()
    await cluster?.dispose()
    await jwks?.close()
  })

  test('calls during the switch are 503 + Retry-After, none served uncharged; served again after the promotion, the accounting within the bound; a lost epoch is noticed', async () => {
    // Every key of the budget shares the hash tag {open:open}: one slot, one master.
    const tag = '{open:open}'
    const old = await cluster.masterOf(tag)
    let now = old
    const figures = await failoverUnderLoad(
      quenchz,
      jwks,
      async () => {
        await cluster.nodes.find((n) => n.port === old)?.kill()
      },
      async () => {
        now = await cluster.promotedFrom(tag, old)
      },
      (sub) => chargesIn(now, `${PREFIX}${tag}:c:${sub}`),
    )
    judge('cluster', figures)
    await redisCli(now, 'FLUSHALL')
    await until('the lost state is noticed', async () => {
      await call(quenchz.url, await jwks.sign('c0', RESOURCE), newTally(), 'c0')
      return quenchz.logs.some((l) => /lost its state/.test(String(l.msg)))
    })
  })
})
