// A PostgreSQL that stops taking writes (SQLSTATE 25006 read_only_sql_transaction: a demoted primary, or a standby
// the address now leads to) is an outage: refunds answer `unavailable` with Retry-After, /readyz turns 503 at once
// (not after its cache), every connection opened before is dropped (the pools are replaced: none keeps answering
// reads from a server that takes no writes), and the provider recovers by itself once the server takes writes again.
// The log names the outage once: reads still succeed on the read-only server, but only a write ends the outage, so
// refused refunds interleaved with successful reads log one 'store unavailable', and the recovery one 'store available
// again'. The test's own PostgreSQL is made read-only for every session (default_transaction_read_only, reloaded).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { MemorySessionStore } from '@tollgate/mcp-endpoint'
import pg from 'pg'
import { type RunningProvider, startProvider } from '../src/index.js'
import { SECRET } from './helpers.js'
import { capturedLogger, outageKey, restBinding } from './outage-harness.js'
import { type PrivatePostgres, privatePostgresSkip, startPrivatePostgres } from './private-postgres.js'
import { rest as restCall } from './rest-helpers.js'

const skip = privatePostgresSkip
let server: PrivatePostgres
let admin: pg.Client
let provider: RunningProvider
const log = capturedLogger()

before(async () => {
  if (skip !== undefined) return
  server = await startPrivatePostgres()
  admin = new pg.Client({ connectionString: server.url() })
  await admin.connect()
  provider = await startProvider({
    secrets: [SECRET],
    logger: log.logger,
    store: { kind: 'postgres', connectionString: server.url('query_timeout=2000&connect_timeout=2'), schema: 'ro' },
    sessionStore: new MemorySessionStore(),
    demoLedger: {},
  })
})

after(async () => {
  await provider?.close()
  await admin?.end()
  await server?.dispose()
})

/** Waits until `check()` resolves true, polling; fails after `limitMs`. */
async function until(check: () => Promise<boolean>, what: string, limitMs = 30_000): Promise<void> {
  const started = performance.now()
  while (!(await check())) {
    if (performance.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

/** The provider's connections to the server opened before `since` (the admin's own excluded). */
async function connectionsOpenedBefore(since: Date): Promise<number> {
  const r = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND backend_start < $1`,
    [since],
  )
  return r.rows[0]?.n ?? 0
}

async function setReadOnly(on: boolean): Promise<void> {
  // The admin's own session is made writable first: ALTER SYSTEM is refused in a read-only transaction.
  await admin.query('SET default_transaction_read_only = off')
  await admin.query(on ? 'ALTER SYSTEM SET default_transaction_read_only = on' : 'ALTER SYSTEM RESET ALL')
  await admin.query('SELECT pg_reload_conf()')
}

test('a read-only server is an outage: unavailable + Retry-After, /readyz 503 at once, connections recycled, recovery by itself', {
  skip,
}, async () => {
  const rest = restBinding('rest', provider)
  // Several connections in both pools: concurrent refunds, and readiness.
  const warm = await Promise.all(Array.from({ length: 6 }, (_, i) => rest.refund(outageKey(`warm${i}`), 'ch_9100')))
  assert.deepEqual(
    warm.map((s) => s.code),
    warm.map(() => 'ok'),
  )
  const reads = () => Promise.all(Array.from({ length: 8 }, () => provider.billing.getTransaction('ch_9100')))
  assert.equal((await reads()).filter((t) => t !== undefined).length, 8)
  assert.equal(await provider.health.ready(), true)
  const switched = (await admin.query<{ now: Date }>('SELECT now() AS now')).rows[0]?.now as Date
  assert.ok((await connectionsOpenedBefore(switched)) > 1, 'the provider holds pooled connections')
  await setReadOnly(true)

  // Backends take the reload when they next read a command: until then a write may still succeed (a new key each).
  let key = ''
  let refused: Awaited<ReturnType<typeof rest.refund>> | undefined
  await until(async () => {
    key = outageKey('read-only')
    refused = await rest.refund(key, 'ch_9100')
    return refused.code !== 'ok'
  }, 'a refund to be refused')
  assert.deepEqual(
    [refused?.status, refused?.code, refused?.retryable, refused?.retryAfter],
    [503, 'unavailable', true, '2'],
  )
  const refusedAt = (await admin.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]?.now as Date
  // The answer above marked the store down, which drops the readiness answer cached a moment ago.
  assert.equal(await provider.health.ready(), false, '/readyz turns 503 with the outage, not after its cache')
  // Reads still succeed on a read-only server — but none on a connection from before the switch: the pools were
  // replaced when the first write was refused.
  assert.equal((await reads()).filter((t) => t !== undefined).length, 8)
  const oldUsed = await admin.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'
       AND pid <> pg_backend_pid() AND backend_start < $1 AND state_change > $2`,
    [switched, refusedAt],
  )
  assert.equal(oldUsed.rows[0]?.n, 0, 'no statement ran on a connection opened before the switch')
  await until(async () => (await connectionsOpenedBefore(switched)) === 0, 'the old connections to be closed')
  assert.equal((await rest.refund(key, 'ch_9100')).code, 'unavailable')

  // Each read succeeds, each write is refused: a read must not end the outage (else each refused write that follows
  // begins another, logged again, and drops the readiness answer again).
  for (let i = 0; i < 4; i++) {
    const charge = await restCall(provider.baseUrl, 'GET', '/v1/transactions/ch_9100')
    assert.equal(charge.status, 200, 'sr_get_transaction is answered from the read-only server')
    assert.notEqual(await provider.billing.getTransaction('ch_9100'), undefined)
    const refund = await rest.refund(i % 2 === 0 ? key : outageKey(`read-only${i}`), 'ch_9100')
    assert.deepEqual([refund.status, refund.code], [503, 'unavailable'])
  }
  const storeLines = () => log.raw.filter((l) => l.includes('"msg":"store ')).join('\n')
  const down = log.messages('store unavailable')
  assert.equal(down.length, 1, `one 'store unavailable' for the read-only period:\n${storeLines()}`)
  // The error's class and code only, never a message or value.
  assert.deepEqual(down[0]?.store_error, { type: 'DatabaseError', code: '25006' })
  assert.equal(log.messages('store available again').length, 0, `still down while read-only:\n${storeLines()}`)

  await setReadOnly(false)
  await until(async () => (await rest.refund(key, 'ch_9100')).code === 'ok', 'the refund to succeed again')
  assert.equal(log.messages('store unavailable').length, 1, `one 'store unavailable' in all:\n${storeLines()}`)
  assert.equal(log.messages('store available again').length, 1, `one 'store available again':\n${storeLines()}`)
  await until(() => provider.health.ready(), '/readyz to answer 200 again')
  const tx = await provider.billing.getTransaction('ch_9100')
  const refunds = ((tx?.refunds ?? []) as { idempotency_key?: string }[]).filter((r) => r.idempotency_key === key)
  assert.equal(refunds.length, 1, 'one refund for the key')
})
