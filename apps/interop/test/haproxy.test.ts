// Two provider replicas on one PostgreSQL schema and two quenchz replicas on one Redis, behind Debian's haproxy
// (round-robin per request, no stickiness): whole sessions of both official clients, providercheck, 50 same-key
// refunds, and a replica SIGKILLed in the middle of a bounded load.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type CallResult, PlatformClient } from '@tollgate/platform-client'
import { main as providercheck } from '@tollgate/providercheck'
import { signHeaders } from '@tollgate/signing'
import { probeRedis, type RedisProbe, type RunningHaproxy, startHaproxy } from '@tollgate/test-support'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import pg from 'pg'
import { type AnyClient, type Credential, connectClient } from './support/clients.js'
import { type CuttableProxy, startCuttableProxy } from './support/cuttable-proxy.js'
import { freePort, HAPROXY_INSTALL_HINT, haproxyConfig, haproxyVersion } from './support/haproxy.js'
import { type ServerProcess, startServerProcess } from './support/processes.js'

const REQUIRED = process.env.TOLLGATE_REQUIRE_SERVICES === '1'
const PG_URL = process.env.TOLLGATE_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const SECRET = 'srmps_interop_6b0c1f2e3d4a59687a9b8c7d6e5f4031'
const HMAC: Credential = { kind: 'hmac', secret: SECRET }
const ISSUER = 'https://issuer.example.invalid'
const RESOURCE = 'https://quenchz.invalid/mcp'
const NO_SUCH_TOOL = 'no tool by that name is available to this caller'
const OVER_BUDGET = 'this caller has spent its share of the upstream budget'

async function probePostgres(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 1500 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return undefined
  } catch (error) {
    return `PostgreSQL at 127.0.0.1:5432 is not reachable (${(error as Error).message})`
  } finally {
    await client.end().catch(() => {})
  }
}

const haproxy = haproxyVersion()
const redisProbe: RedisProbe = await probeRedis('interop-haproxy')
const missing = [
  haproxy === undefined ? `haproxy is not installed (${HAPROXY_INSTALL_HINT})` : undefined,
  await probePostgres(),
  redisProbe.skip,
].filter((m) => m !== undefined)
if (missing.length > 0 && REQUIRED) throw new Error(`${missing.join('; ')}, and TOLLGATE_REQUIRE_SERVICES=1`)
const SKIP = missing.length > 0 ? missing.join('; ') : undefined
// A skipped suite runs no hooks: close the probe's connection now, or it keeps this test file alive.
if (SKIP !== undefined) await redisProbe.cleanup()

/** A loopback JWKS with one RS256 key: both quenchz replicas verify the same tokens. */
async function startJwks() {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const kid = randomUUID()
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ keys: [jwk] }))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  const token = async (sub: string) => {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT({ scope: 'rates:read' })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(ISSUER)
      .setAudience(RESOURCE)
      .setIssuedAt(now)
      .setExpirationTime(now + 900)
      .sign(privateKey)
  }
  const close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections()
      server.close(() => r())
    })
  return { url, token, close }
}

let keySeq = 0
const newKey = () =>
  `0199a3c1-0a0b-7c0d-8e0f-101112131415:ticket:${process.pid}-${Date.now()}-${++keySeq}:refund:${randomUUID()}`
const refundArgs = (key: string, amountMinor: number) => ({
  idempotency_key: key,
  request: {
    transaction_ref: 'ch_9001',
    amount: { amount_minor: amountMinor, currency: 'USD' },
    reason: 'duplicate_charge',
    dry_run: false,
  },
})
const CONTEXT = { correlationId: 'interop-haproxy', channel: 'email' }
const textOf = (r: { content: { text?: string }[] }) => r.content[0]?.text

/** The server that answered a request through the balancer at `base` (HAProxy names it in X-Tollgate-Replica). */
async function answeredBy(base: string): Promise<string | null> {
  const res = await fetch(new URL('/readyz', base)).catch(() => undefined)
  await res?.arrayBuffer()
  return res?.headers.get('x-tollgate-replica') ?? null
}

/** Waits until the balancer hands `name` a request: it is back in rotation (polled, never a fixed wait). */
async function inRotation(base: string, name: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await answeredBy(base)) === name) return
    await new Promise((r) => setTimeout(r, 50))
  }
  assert.fail(`the balancer never handed ${name} a request`)
}

/** Waits until `inARow` requests in a row through the balancer go to others than `name`: it is out of rotation. */
async function outOfRotation(base: string, name: string, inARow = 4): Promise<void> {
  let others = 0
  for (let i = 0; i < 300 && others < inARow; i++) {
    if ((await answeredBy(base)) === name) {
      others = 0
      await new Promise((r) => setTimeout(r, 50))
    } else others++
  }
  if (others < inARow) assert.fail(`the balancer kept handing ${name} requests`)
}

/** Waits until `n` answers are in (the load is under way), polling. */
async function loadUnderWay(outcomes: readonly unknown[], n: number): Promise<void> {
  for (let i = 0; outcomes.length < n; i++) {
    if (i > 1_000) assert.fail(`the load never got ${n} answers`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

test('the README shows the HAProxy configuration the suite uses', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const shown = /The configuration the suite uses[^\n]*\n\n```\n([\s\S]*?)```/.exec(readme)?.[1]
  const used = haproxyConfig([
    { name: 'provider', bind: '127.0.0.1:8080', servers: ['127.0.0.1:12112', '127.0.0.1:12113'] },
    { name: 'quenchz', bind: '127.0.0.1:8931', servers: ['127.0.0.1:8932', '127.0.0.1:8933'] },
  ])
  assert.equal(shown, used)
})

describe('two replicas of each server behind HAProxy (round-robin, no stickiness)', { skip: SKIP }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tollgate-haproxy-'))
  const schema = `tollgate_interop_p${process.pid}_${Date.now().toString(36)}`
  const providers: ServerProcess[] = []
  const quenchzes: ServerProcess[] = []
  let jwks: Awaited<ReturnType<typeof startJwks>>
  let balancer: RunningHaproxy
  let providerUrl = ''
  let quenchzUrl = ''
  // How the quenchz replicas were started (a rolling restart starts them again the same way, on the same ports).
  let quenchzArgStore: string[] = []
  let quenchzEnvStore: NodeJS.ProcessEnv = {}
  const platform = (maxAttempts = 3) =>
    new PlatformClient({
      baseUrl: providerUrl,
      secret: SECRET,
      allowPrivate: true,
      era: '2026-07-28',
      maxAttempts,
      retryDelayMs: 100,
      eraCache: new Map(),
    })
  const bearer = async (sub: string): Promise<Credential> => ({ kind: 'bearer', token: await jwks.token(sub) })

  before(async () => {
    const env = { ...process.env, SIGNING_SECRET: SECRET, MCP_SESSION_KEY: randomUUID() + randomUUID() }
    // One after the other: the first creates the schema and seeds the demo ledger, the second finds them.
    for (let i = 0; i < 2; i++) {
      providers.push(
        await startServerProcess(
          'provider',
          ['--port', '0', '--database-url', PG_URL, '--schema', schema, '--lease-ms', '1500'],
          scratch,
          /^provider listening on (\S+)/m,
          env,
        ),
      )
    }
    jwks = await startJwks()
    const empty = join(scratch, 'recordings')
    mkdirSync(empty)
    writeFileSync(join(empty, 'index.json'), '[]')
    const quenchzArgs = [
      '--port',
      '0',
      '--jwks-url',
      jwks.url,
      '--issuer',
      ISSUER,
      '--source',
      'recordings',
      '--recordings',
      empty,
      '--budget-redis',
      'redis://127.0.0.1:6379',
      '--budget-prefix',
      redisProbe.prefix,
      '--budget-clock',
      'frozen',
      // With --jwks-url every verified sub is a caller of the open fair budget; these numbers give the seed's split
      // for two callers (each its reserve of 15, a shared pool of 30: 45 for the greedy one, 15 for the other).
      // Longer than HAProxy's checks take to mark a replica down on a busy machine (2 × 300 ms, each allowed 1 s).
      '--shutdown-delay-ms',
      '2000',
      '--caller-reserve',
      '15',
      '--budget-pool',
      '30',
    ]
    // Sessions live in the budget's Redis; every replica verifies session ids with the same key.
    const quenchzEnv = { ...process.env, MCP_SESSION_KEY: randomUUID() + randomUUID() }
    quenchzArgStore = quenchzArgs
    quenchzEnvStore = quenchzEnv
    for (let i = 0; i < 2; i++)
      quenchzes.push(
        await startServerProcess('quenchz', quenchzArgs, scratch, /^quenchz listening on (\S+) /m, quenchzEnv),
      )
    const [pPort, qPort] = [await freePort(), await freePort()]
    const hostPort = (u: string) => new URL(u).host
    const config = haproxyConfig([
      { name: 'provider', bind: `127.0.0.1:${pPort}`, servers: providers.map((p) => hostPort(p.url)) },
      { name: 'quenchz', bind: `127.0.0.1:${qPort}`, servers: quenchzes.map((q) => hostPort(q.url)) },
    ])
    balancer = await startHaproxy({ dir: scratch, config, ports: [pPort, qPort] })
    providerUrl = `http://127.0.0.1:${pPort}/mcp`
    quenchzUrl = `http://127.0.0.1:${qPort}/mcp`
  })

  after(async () => {
    await balancer?.stop()
    for (const p of [...providers, ...quenchzes]) await p.stop()
    await jwks?.close()
    await redisProbe.cleanup()
    const c = new pg.Client({ connectionString: PG_URL })
    await c.connect()
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await c.end()
    rmSync(scratch, { recursive: true, force: true })
  })

  test('the balancer alternates replicas per request: one client is answered by both', async () => {
    const p = await connectClient('v2', providerUrl, HMAC)
    const q = await connectClient('v2', quenchzUrl, await bearer('agent-beta'))
    try {
      for (let i = 0; i < 3; i++) {
        await p.listTools()
        await q.listTools()
      }
    } finally {
      await p.close()
      await q.close()
    }
    assert.deepEqual(new Set(p.requests.map((r) => r.replica)), new Set(['provider1', 'provider2']))
    assert.deepEqual(new Set(q.requests.map((r) => r.replica)), new Set(['quenchz1', 'quenchz2']))
  })

  test('providercheck passes through the balancer', async () => {
    const lines: string[] = []
    const code = await providercheck(
      [
        '-sandbox',
        '-transport',
        'mcp',
        '-allow-private',
        '-base-url',
        providerUrl,
        '-tenant',
        '0199a3c1-0a0b-7c0d-8e0f-101112131415',
        '-customer',
        'cus_1001',
        '-transaction',
        'ch_1001',
        '-subscription',
        'sub_1001',
      ],
      { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET },
      { out: (l) => lines.push(l), err: (l) => lines.push(l) },
    )
    assert.equal(code, 0, lines.join('\n'))
    assert.ok(lines.some((l) => /\bpass\b/i.test(l)))
  })

  test('the v2 client (2026-07-28) completes whole sessions on both servers through the balancer', async () => {
    const p = await connectClient('v2', providerUrl, HMAC)
    try {
      assert.equal((await p.listTools()).length, 10)
      const tx = await p.callTool('sr_get_transaction', { transaction_ref: 'ch_9001' })
      assert.equal(tx.structuredContent?.transaction_ref, 'ch_9001')
      const key = newKey()
      const first = await p.callTool('sr_refund', refundArgs(key, 101))
      assert.equal(first.structuredContent?.status, 'succeeded', JSON.stringify(first))
      const replay = await p.callTool('sr_refund', refundArgs(key, 101))
      assert.deepEqual(replay.structuredContent, first.structuredContent)
    } finally {
      await p.close()
    }
    assert.ok(p.requests.every((r) => r.status < 300))
    assert.equal(new Set(p.requests.map((r) => r.replica)).size, 2)
    const q = await connectClient('v2', quenchzUrl, await bearer('agent-beta'))
    try {
      assert.deepEqual((await q.listTools()).map((t) => t.name).sort(), [
        'calendar.why',
        'rates.convert',
        'rates.window',
      ])
      assert.equal(textOf(await q.callTool('rates.nothing', {})), NO_SUCH_TOOL)
    } finally {
      await q.close()
    }
    assert.equal(new Set(q.requests.map((r) => r.replica)).size, 2)
  })

  test('the v1 client (2025-11-25) completes whole sessions across both replicas', async () => {
    const p = await connectClient('v1', providerUrl, HMAC)
    await p.listTools()
    const tx = await p.callTool('sr_get_transaction', { transaction_ref: 'ch_9001' })
    assert.equal(tx.structuredContent?.transaction_ref, 'ch_9001')
    const key = newKey()
    const refund = await p.callTool('sr_refund', refundArgs(key, 102))
    assert.equal(refund.structuredContent?.status, 'succeeded')
    await p.close()
    // initialize, notifications/initialized, tools/list, two calls and DELETE: spread over both replicas, all answered.
    assert.ok(answered(p), JSON.stringify(p.requests))
    assert.equal(p.requests.at(-1)?.method, 'DELETE')
    assert.equal(new Set(p.requests.map((r) => r.replica)).size, 2)
    const q = await connectClient('v1', quenchzUrl, await bearer('agent-beta'))
    await q.listTools()
    assert.equal(textOf(await q.callTool('rates.nothing', {})), NO_SUCH_TOOL)
    await q.close()
    assert.ok(answered(q), JSON.stringify(q.requests))
    assert.equal(new Set(q.requests.map((r) => r.replica)).size, 2)
  })

  /** Every request of a v1 session was answered; the client's optional GET stream is declined with 405 (none offered). */
  const answered = (c: AnyClient) =>
    c.requests.every((r) => (r.method === 'GET' ? r.status === 405 : r.status >= 200 && r.status < 300))

  test('50 concurrent same-key refunds through the balancer execute exactly one refund', async () => {
    const key = newKey()
    const client = platform()
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => client.attempt('sr_refund', refundArgs(key, 250), CONTEXT)),
    )
    const succeeded = outcomes.filter((o): o is Extract<typeof o, { kind: 'result' }> => o.kind === 'result')
    const others = outcomes.filter((o) => o.kind === 'error')
    assert.ok(succeeded.length >= 1)
    for (const s of succeeded) assert.deepEqual(s.value, succeeded[0]?.value)
    for (const o of others)
      assert.deepEqual([o.kind === 'error' && o.code, o.kind === 'error' && o.retryable], ['in_progress', true])
    const refunds = await refundsOf(key)
    assert.equal(refunds, 1)
  })

  /** How many refunds of ch_9001 carry `key` (read through the balancer). */
  async function refundsOf(key: string): Promise<number> {
    const tx = await platform().callTool('sr_get_transaction', { transaction_ref: 'ch_9001' }, CONTEXT)
    assert.equal(tx.kind, 'result')
    const list = ((tx as { value: { refunds?: { idempotency_key?: string }[] } }).value.refunds ?? []).filter(
      (r) => r.idempotency_key === key,
    )
    return list.length
  }

  const sessionsOnKilled: { client: AnyClient; replica: string | null }[] = []

  test('SIGKILL of one provider replica mid-load: every key ends with exactly one outcome, no double refund', async (t) => {
    // 2025-era sessions opened before the kill (continued in the next test).
    for (let i = 0; i < 4; i++) {
      try {
        const c = await connectClient('v1', providerUrl, HMAC)
        sessionsOnKilled.push({ client: c, replica: c.requests[0]?.replica ?? null })
      } catch {
        // Without replica-safe sessions the handshake itself may cross replicas and fail; the next test reports it.
      }
    }
    const keys = Array.from({ length: 40 }, () => newKey())
    const results = new Map<string, CallResult | Error>()
    let done = 0
    let retried = 0
    let killed: Promise<void> | undefined
    const worker = async (mine: string[]) => {
      const client = platform(6)
      for (const key of mine) {
        let last: CallResult | Error = new Error('not called')
        // Bounded: the platform's own retries (6 attempts, then sr_get_operation), repeated while the answer is
        // in_progress (a key whose first attempt died with the replica is leased for 1.5 s, then recovered).
        for (let round = 0; round < 15; round++) {
          try {
            last = await client.callTool('sr_refund', refundArgs(key, 100), CONTEXT)
          } catch (error) {
            last = error as Error
          }
          if (!(last instanceof Error) && !(last.kind === 'error' && last.retryable)) break
          await new Promise((r) => setTimeout(r, 300))
        }
        if (last instanceof Error || last.attempts > 1 || last.kind === 'verified') retried++
        results.set(key, last)
        done++
        if (done === 10 && killed === undefined) killed = providers[0]?.kill()
      }
    }
    await Promise.all(Array.from({ length: 8 }, (_, w) => worker(keys.filter((_, i) => i % 8 === w))))
    await killed
    assert.equal(providers[0]?.child.signalCode, 'SIGKILL')
    for (const key of keys) {
      const r = results.get(key)
      assert.ok(r !== undefined && !(r instanceof Error), `${key}: ${r instanceof Error ? r.message : 'no result'}`)
      const status =
        r.kind === 'verified' ? (r.operation as { status?: string }).status : (r.value as { status?: string }).status
      assert.ok(r.kind !== 'error', `${key}: ${JSON.stringify(r)}`)
      assert.equal(status, 'succeeded', `${key}: ${JSON.stringify(r)}`)
    }
    // Every key has exactly one recorded outcome, and exactly one refund in the ledger.
    const check = platform()
    for (const key of keys) {
      const op = await check.callTool('sr_get_operation', { idempotency_key: key }, CONTEXT)
      assert.equal(op.kind, 'result')
      assert.equal((op as { value: { status?: string } }).value.status, 'succeeded')
    }
    const tx = await check.callTool('sr_get_transaction', { transaction_ref: 'ch_9001' }, CONTEXT)
    const refunds = ((tx as { value: { refunds?: { idempotency_key?: string }[] } }).value.refunds ?? []).map(
      (r) => r.idempotency_key,
    )
    for (const key of keys) assert.equal(refunds.filter((k) => k === key).length, 1, key)
    t.diagnostic(`${keys.length} keys, ${retried} of them retried or verified after the kill`)
  })

  test('2025-era sessions opened before the kill continue on the survivor', async () => {
    assert.equal(sessionsOnKilled.length, 4, 'every session opened')
    assert.ok(
      sessionsOnKilled.some((s) => s.replica === 'provider1'),
      'a session was opened on the killed replica',
    )
    for (const { client } of sessionsOnKilled) {
      const r = await client.callTool('sr_get_transaction', { transaction_ref: 'ch_9001' })
      assert.equal(r.structuredContent?.transaction_ref, 'ch_9001')
      await client.close()
      assert.equal(client.requests.at(-1)?.replica, 'provider2')
    }
  })

  test('a rolling restart of the quenchz replicas under load (SIGTERM, start again) loses no answer', async () => {
    const clients = await Promise.all(
      Array.from({ length: 6 }, async () => connectClient('v2', quenchzUrl, await bearer('agent-beta'))),
    )
    const outcomes: string[] = []
    let stopped = false
    const worker = async (client: AnyClient) => {
      while (!stopped) {
        try {
          // Listing is not charged: the load runs as long as the restarts take, whatever the budget.
          const tools = await client.listTools()
          outcomes.push(tools.length === 3 ? 'listed' : `listed ${tools.length}`)
        } catch (error) {
          const cause = (error as Error).cause as { code?: string; message?: string } | undefined
          outcomes.push(`error ${(error as Error).message.slice(0, 80)} (${cause?.code ?? cause?.message ?? ''})`)
        }
      }
    }
    const load = clients.map(worker)
    try {
      await loadUnderWay(outcomes, 2 * clients.length)
      for (let i = 0; i < quenchzes.length; i++) {
        const old = quenchzes[i] as ServerProcess
        const port = new URL(old.url).port
        await old.stop()
        assert.equal(old.child.exitCode, 0, 'a graceful stop exits 0')
        const args = quenchzArgStore.map((a, j) => (j === 1 ? port : a))
        quenchzes[i] = await startServerProcess(
          'quenchz',
          args,
          scratch,
          /^quenchz listening on (\S+) /m,
          quenchzEnvStore,
        )
        for (
          let tries = 0;
          (await fetch(new URL('/readyz', quenchzes[i]?.url)).then((r) => r.status)) !== 200;
          tries++
        ) {
          if (tries > 50) assert.fail('the restarted replica never became ready')
          await new Promise((r) => setTimeout(r, 100))
        }
        await inRotation(quenchzUrl, `quenchz${i + 1}`) // back in rotation (rise 2) before the next one stops
      }
    } finally {
      stopped = true
      await Promise.all(load)
      for (const c of clients) await c.close()
    }
    const counts = new Map<string, number>()
    for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1)
    assert.deepEqual([...counts.keys()], ['listed'], JSON.stringify(Object.fromEntries(counts)))
    assert.ok(outcomes.length > 100, `${outcomes.length} requests`)
  })

  test('the fair budget across quenchz replicas stays exact when one is SIGKILLed midway', async () => {
    const keys = (await redisProbe.redis?.keys(`${redisProbe.prefix}*`)) ?? []
    if (keys.length > 0) await redisProbe.redis?.del(...keys) // earlier tests' calls: start from a full budget
    // 2025-era sessions opened before the kill: one on each replica (listing is not charged). Sessions are opened
    // until each replica holds one: where round robin stands depends on how many requests earlier waits sent.
    const sessions: AnyClient[] = []
    const openedOn = (c: AnyClient) => c.requests[0]?.replica
    for (let tries = 0; new Set(sessions.map(openedOn)).size < 2; tries++) {
      if (tries === 6) assert.fail(`six sessions never reached both replicas: ${sessions.map(openedOn)}`)
      const session = await connectClient('v1', quenchzUrl, await bearer('agent-beta'))
      if (sessions.some((s) => openedOn(s) === openedOn(session))) await session.close()
      else sessions.push(session)
    }
    assert.deepEqual(new Set(sessions.map(openedOn)), new Set(['quenchz1', 'quenchz2']))
    const alpha = await connectClient('v2', quenchzUrl, await bearer('agent-alpha'))
    const beta = await connectClient('v2', quenchzUrl, await bearer('agent-beta'))
    try {
      // Reserve 15 each, pool 30, frozen clock: agent-alpha gets its reserve 15 plus the pool's 30 = 45 calls, then
      // nothing, however the calls are spread — and one replica dies after call 20.
      for (let i = 0; i < 45; i++) {
        if (i === 20) await quenchzes[0]?.kill()
        assert.equal(textOf(await alpha.callTool('rates.nothing', {})), NO_SUCH_TOOL, `alpha call ${i + 1}`)
      }
      assert.equal(textOf(await alpha.callTool('rates.nothing', {})), OVER_BUDGET)
      for (let i = 0; i < 15; i++)
        assert.equal(textOf(await beta.callTool('rates.nothing', {})), NO_SUCH_TOOL, `beta call ${i + 1}`)
      assert.equal(textOf(await beta.callTool('rates.nothing', {})), OVER_BUDGET)
    } finally {
      await alpha.close()
      await beta.close()
    }
    assert.equal(quenchzes[0]?.child.signalCode, 'SIGKILL')
    const replicas = alpha.requests.map((r) => r.replica)
    assert.ok(replicas.slice(0, 10).includes('quenchz1') && replicas.slice(-10).every((r) => r === 'quenchz2'))
    // Both sessions, including the one opened on the killed replica, continue on the survivor and end there.
    for (const session of sessions) {
      assert.deepEqual((await session.listTools()).map((t) => t.name).sort(), [
        'calendar.why',
        'rates.convert',
        'rates.window',
      ])
      await session.close()
      assert.ok(answered(session), JSON.stringify(session.requests))
      assert.deepEqual(session.requests.at(-1), { method: 'DELETE', rpc: undefined, status: 200, replica: 'quenchz2' })
    }
  })
})

describe('a provider replica whose store is gone leaves the rotation and comes back (HAProxy checks /readyz)', {
  skip: SKIP,
}, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tollgate-haproxy-ready-'))
  const schema = `tollgate_interop_r${process.pid}_${Date.now().toString(36)}`
  const replicas: ServerProcess[] = []
  let proxy: CuttableProxy
  let balancer: RunningHaproxy
  let base = ''

  before(async () => {
    const env = { ...process.env, SIGNING_SECRET: SECRET }
    // Replica 1 reaches PostgreSQL through a forwarder the test can cut (a partition between it and the database);
    // replica 2 directly. Short bounds, so an outage shows within a second.
    const direct = new URL(PG_URL)
    proxy = await startCuttableProxy(Number(direct.port || 5432), direct.hostname)
    const viaProxy = new URL(PG_URL)
    viaProxy.port = String(proxy.port)
    for (const url of [viaProxy, direct]) {
      url.searchParams.set('connect_timeout', '1')
      url.searchParams.set('query_timeout', '800')
      replicas.push(
        await startServerProcess(
          'provider',
          ['--port', '0', '--database-url', url.href, '--schema', schema],
          scratch,
          /^provider listening on (\S+)/m,
          env,
        ),
      )
    }
    const port = await freePort()
    const config = haproxyConfig([
      { name: 'provider', bind: `127.0.0.1:${port}`, servers: replicas.map((p) => new URL(p.url).host) },
    ])
    balancer = await startHaproxy({ dir: scratch, config, ports: [port] })
    base = `http://127.0.0.1:${port}`
  })

  after(async () => {
    await balancer?.stop()
    for (const p of replicas) await p.stop()
    await proxy?.close()
    const c = new pg.Client({ connectionString: PG_URL })
    await c.connect()
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await c.end()
    rmSync(scratch, { recursive: true, force: true })
  })

  /** n signed reads through the balancer: each answer's status and replica. */
  async function reads(n: number): Promise<{ status: number; replica: string | null }[]> {
    const out: { status: number; replica: string | null }[] = []
    for (let i = 0; i < n; i++) {
      const url = new URL('/v1/transactions/ch_9001', base)
      const headers = signHeaders(SECRET, { method: 'GET', host: url.host, path: url.pathname, body: Buffer.alloc(0) })
      const res = await fetch(url, { headers })
      await res.arrayBuffer()
      out.push({ status: res.status, replica: res.headers.get('x-tollgate-replica') })
    }
    return out
  }

  /** Polls a replica's own /readyz until it answers `status`. */
  async function replicaReadyz(replica: ServerProcess, status: number): Promise<void> {
    const url = new URL('/readyz', replica.url)
    for (let i = 0; i < 100; i++) {
      const res = await fetch(url).catch(() => undefined)
      await res?.arrayBuffer()
      if (res?.status === status) return
      await new Promise((r) => setTimeout(r, 100))
    }
    assert.fail(`${url.href} never answered ${status}`)
  }

  test('cut from PostgreSQL: out of rotation, every request answered by the other; reconnected: back in', async () => {
    const before = await reads(20)
    assert.ok(
      before.every((r) => r.status === 200),
      JSON.stringify(before),
    )
    assert.deepEqual(new Set(before.map((r) => r.replica)), new Set(['provider1', 'provider2']))

    proxy.cut()
    await replicaReadyz(replicas[0] as ServerProcess, 503)
    await outOfRotation(base, 'provider1')
    const during = await reads(20)
    assert.deepEqual(
      during.map((r) => `${r.status} ${r.replica}`),
      Array(20).fill('200 provider2'),
      'the replica that cannot reach its database gets no requests',
    )

    proxy.restore()
    await replicaReadyz(replicas[0] as ServerProcess, 200)
    await inRotation(base, 'provider1')
    const afterwards = await reads(20)
    assert.ok(
      afterwards.every((r) => r.status === 200),
      JSON.stringify(afterwards),
    )
    assert.deepEqual(new Set(afterwards.map((r) => r.replica)), new Set(['provider1', 'provider2']))
  })

  test('a rolling restart under load (SIGTERM, start again, one replica after the other) loses no answer', async () => {
    const env = { ...process.env, SIGNING_SECRET: SECRET }
    const outcomes: string[] = []
    let stopped = false
    const worker = async (w: number) => {
      for (let i = 0; !stopped; i++) {
        const write = i % 2 === 0
        const url = new URL(write ? '/v1/refunds' : '/v1/transactions/ch_9001', base)
        const key = write ? newKey() : ''
        const body = write
          ? Buffer.from(
              JSON.stringify({
                transaction_ref: `ch_9${100 + ((w * 31 + i) % 256)}`,
                amount: { amount_minor: 1, currency: 'USD' },
                reason: 'customer_request',
                dry_run: false,
              }),
            )
          : Buffer.alloc(0)
        const headers: Record<string, string> = {
          ...signHeaders(SECRET, { method: write ? 'POST' : 'GET', host: url.host, path: url.pathname, body, key }),
          ...(write && { 'content-type': 'application/json', 'idempotency-key': key }),
        }
        try {
          const res = await fetch(url, { method: write ? 'POST' : 'GET', headers, ...(write && { body }) })
          const text = await res.text()
          outcomes.push(res.status === 200 ? '200' : `${res.status} ${text.slice(0, 100)}`)
        } catch (error) {
          outcomes.push(`error ${((error as Error).cause as { code?: string } | undefined)?.code ?? error}`)
        }
      }
    }
    const load = Array.from({ length: 8 }, (_, w) => worker(w))
    try {
      await loadUnderWay(outcomes, 16)
      for (let i = 0; i < replicas.length; i++) {
        const old = replicas[i] as ServerProcess
        const port = new URL(old.url).port
        const args = old.child.spawnargs.slice(old.child.spawnargs.indexOf('--port'))
        await old.stop()
        assert.equal(old.child.exitCode, 0, 'a graceful stop exits 0')
        replicas[i] = await startServerProcess(
          'provider',
          args.map((a, j) => (j === 1 ? port : a)),
          scratch,
          /^provider listening on (\S+)/m,
          env,
        )
        await replicaReadyz(replicas[i] as ServerProcess, 200)
        await inRotation(base, `provider${i + 1}`) // back in rotation (rise 2) before the next one stops
      }
    } finally {
      stopped = true
      await Promise.all(load)
    }
    const counts = new Map<string, number>()
    for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1)
    assert.deepEqual([...counts.keys()], ['200'], JSON.stringify(Object.fromEntries(counts)))
    assert.ok(outcomes.length > 200, `${outcomes.length} requests`)
  })
})
