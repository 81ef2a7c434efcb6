// A PostgreSQL outage is answered as one: with the test's own PostgreSQL stopped mid-run, or frozen (SIGSTOP), refunds
// on every binding — REST, MCP 2026-07-28 and 2025-era on the fast paths and through the SDK — answer `unavailable`
// (retryable; REST 503 + Retry-After, the fast paths' HTTP answer with Retry-After too), never internal_error, and a
// frozen database costs a call its timeouts, not the whole freeze. Once PostgreSQL answers again the same keys
// succeed, and every key has exactly one refund. The log names the outage once per provider and its end once.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { MemorySessionStore } from '@tollgate/mcp-endpoint'
import { type RunningProvider, startProvider } from '../src/index.js'
import { SECRET } from './helpers.js'
import {
  assertOnlyOutages,
  type Binding,
  capturedLogger,
  mcpBinding,
  refundsByKey,
  restBinding,
  startLoad,
} from './outage-harness.js'
import { type PrivatePostgres, privatePostgresSkip, startPrivatePostgres } from './private-postgres.js'

const skip = privatePostgresSkip

// A statement's answer may take 800 ms, a connection 1 s: what a frozen database costs one store call at most.
const TIMEOUTS = 'query_timeout=800&connect_timeout=1'

let pgServer: PrivatePostgres
let fast: RunningProvider
let sdk: RunningProvider
const fastLog = capturedLogger()
const sdkLog = capturedLogger()
let bindings: Binding[] = []
const FAST_BINDINGS = new Set(['rest', 'modern-fast', 'legacy-fast'])

before(async () => {
  if (skip !== undefined) return
  pgServer = await startPrivatePostgres()
  const common = {
    secrets: [SECRET],
    store: { kind: 'postgres' as const, connectionString: pgServer.url(TIMEOUTS), schema: 'outage' },
    // A call cut after its claim committed answers in_progress until the lease ends: short here, so retries are quick.
    inProgressLeaseMs: 1000,
    demoLedger: {},
  }
  // 2025-era sessions in memory: the calls reach the tool (a session store on the stopped database is the endpoint's
  // own 503, tested in @tollgate/mcp-endpoint).
  fast = await startProvider({ ...common, logger: fastLog.logger, sessionStore: new MemorySessionStore() })
  sdk = await startProvider({
    ...common,
    logger: sdkLog.logger,
    modernFastPath: false,
    sessionStore: new MemorySessionStore(),
  })
  bindings = [
    restBinding('rest', fast),
    await mcpBinding('modern-fast', fast, 'modern'),
    await mcpBinding('legacy-fast', fast, 'legacy'),
    await mcpBinding('modern-sdk', sdk, 'modern'),
    await mcpBinding('legacy-sdk', sdk, 'legacy'),
  ]
})

after(async () => {
  for (const b of bindings) await b.close().catch(() => {})
  await fast?.close().catch(() => {})
  await sdk?.close().catch(() => {})
  await pgServer?.dispose()
})

const allKeys: string[] = []

/** Every key that got a success (in this file's tests so far) has exactly one refund, and no other key has one. */
async function assertExactlyOnce(keys: readonly string[]) {
  allKeys.push(...keys)
  const refunds = await refundsByKey(fast)
  const ours = [...refunds].filter(([k]) => k.startsWith('outage-'))
  assert.deepEqual(
    ours.filter(([, n]) => n !== 1),
    [],
    'a key refunded more than once',
  )
  assert.deepEqual(ours.map(([k]) => k).sort(), [...allKeys].sort())
}

/** One 'store unavailable' (class and code, nothing else) and one 'store available again' per provider. */
function assertLoggedOnce(log: ReturnType<typeof capturedLogger>, name: string, outages: number) {
  const down = log.messages('store unavailable')
  const up = log.messages('store available again')
  assert.equal(
    down.length,
    outages,
    `${name}: 'store unavailable' lines: ${log.raw.filter((l) => l.includes('store ')).join('\n')}`,
  )
  assert.equal(up.length, outages, `${name}: 'store available again' lines`)
  for (const line of down) {
    const e = line.store_error as { type: string; code: string }
    assert.deepEqual(Object.keys(e).sort(), ['code', 'type'])
    assert.match(e.code, /^(ECONNREFUSED|ECONNRESET|57P0[123]|PG_[A-Z_]+)$/, `${name}: ${e.code}`)
  }
  // The calls' own lines say `unavailable`; none of them carries an exception dump of the outage.
  assert.equal(log.lines.filter((l) => l.msg === 'tool failed').length, 0, `${name}: per-call fault lines`)
  // No key (nor any other argument) in the log.
  assert.ok(!log.raw.some((l) => l.includes('outage-')), `${name}: an idempotency key was logged`)
}

test('PostgreSQL stopped mid-run and started again: unavailable with Retry-After on every binding, then exactly one refund per key', {
  skip,
}, async (t) => {
  const load = startLoad(bindings, { pauseMs: 50, keyTimeoutMs: 30_000 })
  await load.successes(2, 20_000)
  const atStop = load.seen.length
  const stoppedAt = performance.now()
  await pgServer.stop()
  await load.saw('unavailable', atStop, 10_000)
  const outageMs = performance.now() - stoppedAt
  await pgServer.start()
  await load.successes(2, 30_000)
  await load.stop()

  const during = load.seen.slice(atStop)
  assertOnlyOutages(load.seen, (b) => FAST_BINDINGS.has(b))
  // Through a stopped PostgreSQL (connection refused) an answer comes at once, not after a timeout.
  const refused = during.filter((s) => s.code === 'unavailable')
  const slowest = Math.max(...refused.map((s) => s.ms))
  assert.ok(slowest < 1500, `an unavailable answer took ${Math.round(slowest)} ms`)
  // The fast paths answered (and so set Retry-After); the SDK provider's calls all went through the SDK.
  assert.ok(fast.diagnostics.fastPathAnswered > 0 && fast.diagnostics.legacyFastPathAnswered > 0)
  assert.equal(sdk.diagnostics.fastPathAnswered + sdk.diagnostics.legacyFastPathAnswered, 0)
  for (const b of FAST_BINDINGS)
    assert.ok(
      refused.some((s) => s.binding === b && s.retryAfter !== null),
      `${b}: an unavailable answer with Retry-After`,
    )
  await assertExactlyOnce([...load.done.values()].flat())
  assertLoggedOnce(fastLog, 'fast', 1)
  assertLoggedOnce(sdkLog, 'sdk', 1)
  t.diagnostic(
    `outage ${Math.round(outageMs)} ms; ${refused.length} unavailable answers, slowest ${Math.round(slowest)} ms; ` +
      `${[...load.done.values()].flat().length} keys done`,
  )
})

test('PostgreSQL frozen (SIGSTOP): calls answer unavailable within the timeouts, not for the whole freeze; thawed, exactly one refund per key', {
  skip,
}, async (t) => {
  const downBefore = [fastLog, sdkLog].map((l) => l.messages('store unavailable').length)
  const load = startLoad(bindings, { pauseMs: 50, keyTimeoutMs: 30_000 })
  await load.successes(2, 20_000)
  const atFreeze = load.seen.length
  pgServer.freeze()
  const frozenAt = performance.now()
  try {
    await load.saw('unavailable', atFreeze, 15_000)
    // Held frozen well past one call's bound, so a call waiting for the thaw would show.
    while (performance.now() - frozenAt < 4000) await new Promise((r) => setTimeout(r, 50))
  } finally {
    pgServer.thaw()
  }
  const frozenMs = performance.now() - frozenAt
  await load.successes(2, 30_000)
  await load.stop()

  assertOnlyOutages(load.seen, (b) => FAST_BINDINGS.has(b))
  const refused = load.seen.slice(atFreeze).filter((s) => s.code === 'unavailable')
  const slowest = Math.max(...refused.map((s) => s.ms))
  // One call makes at most a few store calls in a row, each bounded by 800 ms (statement) or 1 s (connection).
  assert.ok(
    slowest < 3500,
    `an unavailable answer took ${Math.round(slowest)} ms during a ${Math.round(frozenMs)} ms freeze`,
  )
  await assertExactlyOnce([...load.done.values()].flat())
  for (const [i, log] of [fastLog, sdkLog].entries()) {
    const down = log.messages('store unavailable').slice(downBefore[i])
    assert.equal(down.length, 1, `'store unavailable' once per freeze`)
    assert.match(String((down[0]?.store_error as { code?: string } | undefined)?.code), /^PG_(QUERY|CONNECT)_TIMEOUT$/)
  }
  t.diagnostic(
    `freeze ${Math.round(frozenMs)} ms; ${refused.length} unavailable answers, slowest ${Math.round(slowest)} ms`,
  )
})
