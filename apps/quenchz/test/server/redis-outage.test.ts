// The budget's Redis failing under a running quenchz (its CLI as its own process, --jwks-url, every sub a caller):
// a redis-server the test starts itself is stopped, started again with its data, started again EMPTY, and frozen
// with SIGSTOP. quenchz must fail closed (no call served uncharged), answer 503 + Retry-After fast on both MCP eras,
// bound a frozen Redis by --budget-redis-timeout-ms, never charge a call after its client was answered or had gone,
// say 503 on /readyz while Redis is away, and recover by itself with the accounting exact. The budget clock is
// frozen, so what each caller is owed only goes down and is counted exactly.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { type CliProcess, startCliProcess } from './support/cli-process.ts'
import { connect } from './support/clients.ts'
import { type JwksServer, startJwksServer, TEST_ISSUER } from './support/jwks-server.ts'
import { NO_REDIS_SERVER, type OwnRedis, ownRedis, unreadBytes } from './support/own-redis.ts'
import { legacyInitialize, modernToolCall } from './support/raw-mcp.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'
import { until as untilTries } from './support/wait.ts'

const RESOURCE = 'https://quenchz.invalid/mcp'
const OVER_BUDGET = 'this caller has spent its share of the upstream budget'
/** Each caller's own reserve plus the shared pool: what one caller alone may spend, the clock being frozen. */
const RESERVE = 3
const POOL = 4
const OWED = RESERVE + POOL
/**
 * The command timeout. The frozen test needs two calls' charges queued in the frozen Redis before the first times out
 * (they share a connection that is dropped then): at 300 ms a loaded machine sometimes sent the second too late and it
 * was refused at once instead, never reaching Redis. A second leaves room for any load seen here.
 */
const TIMEOUT_MS = 1_000
/** A frozen Redis may cost a call the command timeout, plus scheduling on a loaded 2-core machine; never seconds. */
const BOUND_MS = TIMEOUT_MS + 700

const { scratch, empty } = scratchWithEmptyRecordings('quenchz-outage-')
after(() => rmSync(scratch, { recursive: true, force: true }))

interface Answer {
  status: number
  retryAfter: string | null
  body: { result?: { isError?: boolean; content?: Array<{ text?: string }> }; error?: { code: number; data?: unknown } }
  ms: number
}

/** A 2026-07-28 tools/call of calendar.why over raw HTTP (the stateless era), with how long its answer took. */
async function modernCall(url: string, token: string, signal?: AbortSignal): Promise<Answer> {
  const started = performance.now()
  const res = await fetch(url, {
    method: 'POST',
    ...modernToolCall(token, 1, 'calendar.why', { day: '2026-04-03' }),
    ...(signal !== undefined && { signal }),
  })
  const body = (await res.json()) as Answer['body']
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body, ms: performance.now() - started }
}

/** A 2025-era session over raw HTTP: initialize, initialized, then tools/call on its Mcp-Session-Id. */
async function legacySession(url: string, token: string): Promise<(id: number) => Promise<Answer>> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const auth = { authorization: `Bearer ${token}` }
  const init = await legacyInitialize(url, token, 0)
  assert.equal(init.status, 200)
  await init.arrayBuffer()
  const session = { ...headers, ...auth, 'mcp-session-id': init.headers.get('mcp-session-id') as string }
  const note = await fetch(url, {
    method: 'POST',
    headers: { ...session, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  })
  await note.arrayBuffer()
  return async (id) => {
    const started = performance.now()
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...session, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'calendar.why', arguments: { day: '2026-04-03' } },
      }),
    })
    const body = (await res.json()) as Answer['body']
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body, ms: performance.now() - started }
  }
}

const served = (a: Answer) => a.status === 200 && a.body.result !== undefined && a.body.result.isError !== true
const overBudget = (a: Answer) => a.status === 200 && a.body.result?.content?.[0]?.text === OVER_BUDGET

/** The 503 of a call the budget could not charge: Retry-After, the fixed JSON-RPC error, nothing run. */
function assertUnavailable(a: Answer, what: string): void {
  assert.equal(a.status, 503, `${what}: ${JSON.stringify(a.body)}`)
  assert.equal(a.retryAfter, '1', what)
  assert.equal(a.body.error?.code, -32000, what)
  assert.deepEqual(a.body.error?.data, { reason: 'budget-unavailable', retryAfterSeconds: 1 }, what)
}

/** Calls until the budget refuses; resolves with how many were served (each one a charge). */
async function drain(url: string, token: string): Promise<number> {
  for (let n = 0; n <= 100; n++) {
    const a = await modernCall(url, token)
    if (overBudget(a)) return n
    assert.ok(served(a), `call ${n + 1}: ${a.status} ${JSON.stringify(a.body)}`)
  }
  throw new Error('100 calls served: the budget charges nothing')
}

async function readyz(cli: CliProcess): Promise<number> {
  const r = await fetch(new URL('/readyz', cli.url))
  await r.arrayBuffer()
  return r.status
}

/** The shared wait, for at most 300 tries (15 s). */
const until = (what: string, check: () => Promise<boolean>) => untilTries(what, check, 300)

/**
 * Waits (at most 3 s, checking every 5 ms) until the connections `open` have sent the server on `port` at least `bytes`
 * it has not read: commands that reached a frozen Redis. Fails naming what arrived when they never do.
 */
async function untilQueued(port: number, open: readonly number[], bytes: number): Promise<void> {
  const queued = () => open.reduce((n, client) => n + (unreadBytes(port).get(client) ?? 0), 0)
  const deadline = performance.now() + 3000
  while (queued() < bytes) {
    if (performance.now() > deadline)
      assert.fail(`the frozen Redis was sent ${queued()} bytes within 3 s, not the ${bytes} of the calls' charges`)
    await sleep(5)
  }
}

const logged = (cli: CliProcess, msg: RegExp) => cli.logs.filter((l) => msg.test(String(l.msg)))

describe('the budget Redis fails under a running quenchz', { skip: NO_REDIS_SERVER }, () => {
  let redis: OwnRedis
  let jwks: JwksServer
  /** Reseeds when Redis comes back empty (the default). */
  let quenchz: CliProcess
  /** Refuses when Redis comes back empty, until an operator acknowledges the loss. */
  let strict: CliProcess
  before(async () => {
    redis = await ownRedis()
    await redis.start()
    jwks = await startJwksServer()
    const common = [
      ...['--port', '0', '--budget-clock', 'frozen', '--jwks-url', jwks.url, '--issuer', TEST_ISSUER],
      ...['--source', 'recordings', '--recordings', empty, '--budget-redis', redis.url],
      ...['--caller-reserve', String(RESERVE), '--budget-pool', String(POOL)],
      ...['--budget-redis-timeout-ms', String(TIMEOUT_MS)],
    ]
    quenchz = await startCliProcess([...common, '--budget-prefix', 'reseeding:'], scratch)
    strict = await startCliProcess([...common, '--budget-prefix', 'strict:', '--budget-state-lost', 'refuse'], scratch)
  })
  after(async () => {
    await quenchz?.stop()
    await strict?.stop()
    await redis?.dispose()
    await jwks?.close()
  })

  test('stopped: calls on both eras are refused in well under a second with 503 + Retry-After, none served or charged; restarted: ready again by itself, the accounting exact', async () => {
    const alice = await jwks.sign('alice', RESOURCE)
    assert.ok(served(await modernCall(quenchz.url, alice)))
    const legacyCall = await legacySession(quenchz.url, alice)
    assert.ok(served(await legacyCall(1)))
    const sdk = await connect('v2-modern', quenchz.url, alice)
    assert.equal(await readyz(quenchz), 200)

    await redis.stop()
    for (let i = 0; i < 3; i++) {
      const a = await modernCall(quenchz.url, alice)
      assertUnavailable(a, `2026-07-28 call ${i + 1}`)
      assert.ok(a.ms < BOUND_MS, `answered in ${Math.round(a.ms)} ms`)
    }
    // The 2025 era's session lives in the same Redis: the endpoint cannot find it and says 503 + Retry-After too.
    const legacy = await legacyCall(2)
    assert.equal(legacy.status, 503)
    assert.ok(Number(legacy.retryAfter) >= 1, `Retry-After ${legacy.retryAfter}`)
    assert.ok(legacy.ms < BOUND_MS, `answered in ${Math.round(legacy.ms)} ms`)
    // The official client sees an HTTP error, not a tool result it could mistake for an answer.
    await assert.rejects(sdk.callTool('calendar.why', { day: '2026-04-03' }))
    await until('/readyz 503 while Redis is down', async () => (await readyz(quenchz)) === 503)

    await redis.start()
    await until('/readyz 200 once Redis is back', async () => (await readyz(quenchz)) === 200)
    // Two calls were charged before the outage and none during it: exactly OWED - 2 are left, on both eras' path.
    assert.ok(served(await legacyCall(3)))
    assert.equal(await drain(quenchz.url, alice), OWED - 3)
    await sdk.close()

    await until('the calls logged', async () => logged(quenchz, /^call/).length >= OWED + 5)
    const lines = quenchz.logs.filter((l) => l.sub === 'alice' && /^call/.test(String(l.msg)))
    assert.equal(lines.filter((l) => l.outcome === 'served').length, OWED)
    assert.ok(lines.filter((l) => l.outcome === 'unavailable').length >= 4, 'each refused call logged as unavailable')
    // The cause once per outage, however many calls it refused.
    assert.equal(logged(quenchz, /^budget store failed/).length, 1)
    assert.equal(logged(quenchz, /^budget store answers again/).length, 1)
  })

  test('restarted EMPTY: the lost state is noticed and logged once; by default every caller starts full again, with --budget-state-lost refuse calls are 503 until acknowledged', async () => {
    const alice = await jwks.sign('alice', RESOURCE)
    const bob = await jwks.sign('bob', RESOURCE)
    assert.ok(overBudget(await modernCall(quenchz.url, alice)), 'alice spent everything in the test before')
    assert.equal(await drain(strict.url, bob), OWED)

    // A restart that loses the data: no appendonly file, no RDB (or a flush, or a failover to an empty replica).
    await redis.stop()
    await until('/readyz 503 while Redis is down', async () => (await readyz(quenchz)) === 503)
    await redis.start({ empty: true })
    for (const cli of [quenchz, strict])
      await until('/readyz 200 once Redis is back', async () => (await readyz(cli)) === 200)
    // Reseeded: alice is owed her reserve and the pool again; the loss is said once, not once per call.
    assert.equal(await drain(quenchz.url, alice), OWED)
    await until('the loss logged', async () => logged(quenchz, /lost its state/).length > 0)
    const lost = logged(quenchz, /lost its state/)
    assert.equal(lost.length, 1)
    assert.equal(lost[0]?.action, 'reseeded')
    assert.equal(lost[0]?.level, 50)

    // Refusing: nothing is served, from a state that is not there, until an operator says so.
    for (let i = 0; i < 3; i++) assertUnavailable(await modernCall(strict.url, bob), `strict call ${i + 1}`)
    await until('the refusal logged', async () => logged(strict, /lost its state/).length > 0)
    assert.deepEqual(
      logged(strict, /lost its state/).map((l) => [l.action, l.acknowledge]),
      [['refusing', 'SET strict:epoch acknowledged']],
    )
    const operator = new Redis(redis.url)
    await operator.set('strict:epoch', 'acknowledged')
    await operator.quit()
    assert.equal(await drain(strict.url, bob), OWED)
  })

  test('frozen (SIGSTOP): each call is answered 503 within the command timeout; nothing asked meanwhile is charged when Redis resumes, an abandoned call included', async () => {
    const carol = await jwks.sign('carol', RESOURCE)
    // What one call sends Redis (its charge), from Redis's count of bytes received around it, less one INFO's own.
    // Measured on the second of two calls: the first on a connection sends the script's text (EVAL), later ones its
    // SHA1 (EVALSHA), as the calls during the freeze will.
    const probe = new Redis(redis.url)
    const received = async () => Number(/total_net_input_bytes:(\d+)/.exec(await probe.info('stats'))?.[1])
    assert.ok(served(await modernCall(quenchz.url, carol)))
    const before = await received()
    assert.ok(served(await modernCall(quenchz.url, carol)))
    const afterCall = await received()
    const oneCall = afterCall - before - ((await received()) - afterCall)
    await probe.quit()
    assert.ok(oneCall > 100, `one call sends Redis its charge: ${oneCall} bytes`)
    // What carol is owed after it: her reserve's rest and what the others left of the shared pool (the log line's
    // `left`, from the same atomic step that charged her).
    const carolLines = () => quenchz.logs.filter((l) => l.sub === 'carol')
    await until('both calls logged', async () => carolLines().length === 2)
    const left = carolLines().at(-1)?.left as { reserve: number; spare: number }
    const failedBefore = logged(quenchz, /^budget store failed/).length
    // The connections open now (quenchz's among them): a reconnect's, made during the freeze, is not counted below.
    const open = [...unreadBytes(redis.port).keys()]
    redis.freeze()
    try {
      // Two calls reach the frozen Redis: the first's client gives up, the other waits for its answer. Both charges
      // sit unexecuted in Redis; when it resumes neither may count. The first is abandoned as soon as its charge is
      // in the frozen Redis's receive queue (a call's bytes, give or take a TIME or a longer deadline) — not after
      // the second's too: under load the second can reach Redis later than the first's command timeout, and a call
      // already answered 503 is no longer one its client abandons. Never reaching the queue fails the test.
      const gone = new AbortController()
      const firstSentAt = performance.now()
      const abandoned = modernCall(quenchz.url, carol, gone.signal)
      await untilQueued(redis.port, open, oneCall - 64)
      gone.abort()
      await assert.rejects(abandoned)
      const waitingSentAt = performance.now()
      const waiting = modernCall(quenchz.url, carol)
      await untilQueued(redis.port, open, 2 * oneCall - 64)
      const waited = await waiting
      assertUnavailable(waited, 'the call that waited')
      // Both charges share quenchz's one connection, which gives up the command timeout after the first was sent:
      // the call that waited is answered then (so sooner after its own start than a lone call would be).
      const heldFor = waitingSentAt + waited.ms - firstSentAt
      assert.ok(
        heldFor >= TIMEOUT_MS * 0.9,
        `the frozen Redis held the calls for the timeout: ${Math.round(heldFor)} ms`,
      )
      const times = [Math.round(waited.ms)]
      // The connection that timed out is dropped: later calls are refused at once while it reconnects.
      for (let i = 0; i < 3; i++) {
        const a = await modernCall(quenchz.url, carol)
        assertUnavailable(a, `frozen call ${i + 1}`)
        times.push(Math.round(a.ms))
      }
      assert.ok(
        times.every((ms) => ms < BOUND_MS),
        `each answered within ${BOUND_MS} ms: ${times.join(', ')}`,
      )
      await until('/readyz 503 while Redis is frozen', async () => (await readyz(quenchz)) === 503)
      // Long enough that every command sent meanwhile is past its deadline when Redis runs it.
      await sleep(2 * TIMEOUT_MS)
    } finally {
      redis.thaw()
    }
    await until('/readyz 200 once Redis resumes', async () => (await readyz(quenchz)) === 200)
    // The five calls asked during the freeze (the abandoned one too) charged nothing, then or when Redis resumed.
    assert.equal(await drain(quenchz.url, carol), left.reserve + left.spare)
    assert.equal(logged(quenchz, /^budget store failed/).length, failedBefore + 1)
  })
})
