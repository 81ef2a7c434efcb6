// Outages against programming faults, at the edges the outage suites do not reach: which errors are outages, a
// billing port whose own database is down (unavailable + Retry-After) against one with a bug (internal_error, no
// Retry-After), a store lost between the billing call and its record (the lease ends at once, so the retry recovers
// through lookup instead of answering in_progress), and the store's health not flapping on calls that straddle a
// change.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { signHeaders } from '@tollgate/signing'
import {
  DemoLedger,
  demoLedgerStore,
  openSqliteStore,
  ProviderRules,
  type RefundCommand,
  type Store,
  StoreError,
} from '../src/index.js'
import { outageOf, StoreHealth } from '../src/store/outage.js'
import { delegateBilling, SECRET, startTestProvider } from './helpers.js'
import { capturedLogger, mcpBinding, outageKey, restBinding } from './outage-harness.js'

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code })

test('outages are told from programming faults by code, never by a message that could quote a value', () => {
  const outages: [unknown, string][] = [
    [coded('ECONNREFUSED'), 'unreachable'],
    [coded('ECONNRESET'), 'unreachable'],
    [coded('57P01'), 'unreachable'],
    [coded('08006'), 'unreachable'],
    [coded('53300'), 'unreachable'],
    [coded('53100'), 'disk'],
    [coded('40001'), 'contention'],
    [coded('40P01'), 'contention'],
    [coded('SQLITE_FULL'), 'disk'],
    [coded('SQLITE_IOERR_WRITE'), 'disk'],
    [coded('SQLITE_BUSY'), 'contention'],
    [coded('SQLITE_LOCKED_SHAREDCACHE'), 'contention'],
    [coded('ENOSPC'), 'disk'],
    [new Error('Connection terminated unexpectedly'), 'unreachable'],
    [new Error('Query read timeout'), 'unreachable'],
    [new Error('timeout exceeded when trying to connect'), 'unreachable'],
    [new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')]), 'unreachable'],
    [new Error('Connection terminated due to connection timeout', { cause: coded('ETIMEDOUT') }), 'unreachable'],
    [new StoreError('wrapped', { cause: coded('57P03') }), 'unreachable'],
  ]
  for (const [error, kind] of outages) assert.equal(outageOf(error)?.kind, kind, String((error as Error).message))
  const faults = [
    new TypeError('cannot read properties of undefined'),
    coded('23505'), // unique violation
    coded('42P01'), // undefined table
    coded('22P02'), // invalid text representation
    coded('SQLITE_CONSTRAINT_PRIMARYKEY'),
    coded('SQLITE_ERROR'),
    coded('ENOENT'), // not a connect
    new Error('Cannot use a pool after calling end on the pool'),
    'a string',
  ]
  for (const error of faults) assert.equal(outageOf(error), undefined, String(error))
  assert.equal(new StoreError('wrapped', { cause: coded('23505') }).outage, undefined)
})

test("a port whose database is down answers unavailable with Retry-After; a port's bug stays internal_error", async () => {
  let failWith: Error = coded('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:5432')
  // The merchant's own billing database: a SQLite file beside the provider's store.
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-outage-port-'))
  const ledgerStore = openSqliteStore(join(dir, 'ledger.sqlite'))
  const ledger = new DemoLedger(demoLedgerStore(ledgerStore))
  await ledger.seed()
  const billing = delegateBilling(ledger, {
    refund: async () => {
      throw failWith
    },
  })
  const p = await startTestProvider({ billing })
  const rest = restBinding('rest', p)
  const modern = await mcpBinding('modern-fast', p, 'modern')
  try {
    for (const b of [rest, modern]) {
      failWith = coded('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:5432')
      const down = await b.refund(outageKey('port'), 'ch_9100')
      assert.equal(down.code, 'unavailable', b.name)
      assert.equal(down.retryable, true)
      assert.equal(down.retryAfter, '2', b.name)
      if (b === rest) assert.equal(down.status, 503)
      failWith = new TypeError("Cannot read properties of undefined (reading 'amount')")
      const bug = await b.refund(outageKey('port'), 'ch_9100')
      // A throwing refund leaves the key to recovery (its fate unknown): unavailable, as before this change.
      assert.equal(bug.code, 'unavailable', b.name)
    }
    // A read that throws: the port's bug is internal_error without Retry-After; its database down is unavailable.
    const read = async (error: Error) => {
      const port = billing as { getTransaction: (ref: string) => Promise<unknown> }
      const original = port.getTransaction
      port.getTransaction = async () => {
        throw error
      }
      try {
        return await fetchTransaction(p.baseUrl)
      } finally {
        port.getTransaction = original
      }
    }
    const bug = await read(new TypeError('x is undefined'))
    assert.deepEqual([bug.status, bug.code, bug.retryAfter], [500, 'internal_error', null])
    const down = await read(coded('ECONNRESET'))
    assert.deepEqual([down.status, down.code, down.retryAfter], [503, 'unavailable', '2'])
  } finally {
    await modern.close()
    await p.stop()
    await ledgerStore.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

async function fetchTransaction(base: string) {
  const url = new URL('/v1/transactions/ch_1001', base)
  const headers = signHeaders(SECRET, {
    method: 'GET',
    host: url.host,
    path: url.pathname,
    body: Buffer.alloc(0),
    key: '',
  })
  const res = await fetch(url, { headers })
  const json = (await res.json()) as { error?: { code: string } }
  return { status: res.status, code: json.error?.code, retryAfter: res.headers.get('retry-after') }
}

test('the store lost after the billing call: unavailable, and the retry recovers through lookup at once (not in_progress)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-outage-finish-'))
  const store = openSqliteStore(join(dir, 's.sqlite'))
  try {
    const ledger = new DemoLedger(demoLedgerStore(store))
    await ledger.seed()
    let refunds = 0
    // Refunds outside the store's transaction, so the rules record the outcome with their own finish.
    const billing = delegateBilling(ledger, {
      refund: async (key: string, command: RefundCommand) => {
        refunds++
        return ledger.refund(key, command)
      },
    })
    let finishFails = 1
    const flaky: Store = Object.assign(Object.create(store) as Store, {
      finish: async (...args: Parameters<Store['finish']>) => {
        if (finishFails-- > 0) throw new StoreError('SQLite store operation failed', { cause: coded('SQLITE_FULL') })
        return store.finish(...args)
      },
    })
    const rules = new ProviderRules({ store: flaky, billing, inProgressLeaseMs: 60_000 })
    const key = outageKey('finish')
    const args = {
      idempotency_key: key,
      request: {
        transaction_ref: 'ch_9100',
        amount: { amount_minor: 1, currency: 'USD' },
        reason: 'goodwill',
        dry_run: false,
      },
    }
    const first = await rules.refund(args)
    assert.equal(first.ok, false)
    assert.equal(!first.ok && first.body.error.code, 'unavailable')
    assert.equal(!first.ok && first.retryAfterSeconds, 5)
    // With a 60 s lease, a claim left running would answer in_progress here.
    const retry = await rules.refund(args)
    assert.equal(retry.ok && retry.body.status, 'succeeded')
    assert.equal(refunds, 1, 'the retry found the refund through lookup, not by refunding again')
    const tx = await ledger.getTransaction('ch_9100')
    assert.equal(
      ((tx?.refunds ?? []) as { idempotency_key: string }[]).filter((r) => r.idempotency_key === key).length,
      1,
    )
  } finally {
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test("the store's health changes only on calls that started in its current state: no flapping lines", () => {
  const log = capturedLogger()
  const health = new StoreHealth()
  const full = { kind: 'disk' as const, type: 'SqliteError', code: 'SQLITE_FULL' }
  const beforeOutage = health.epoch
  const alsoBefore = health.epoch
  health.failed(full, beforeOutage)
  health.announce(log.logger)
  // A call in flight when the outage began answers late: the store is still down.
  health.succeeded(alsoBefore)
  assert.equal(health.outage?.code, 'SQLITE_FULL')
  const duringOutage = health.epoch
  const alsoDuring = health.epoch
  health.succeeded(duringOutage)
  assert.equal(health.outage, undefined)
  // A call stuck during the outage fails after the recovery: not a new outage.
  health.failed({ kind: 'unreachable', type: 'Error', code: 'PG_QUERY_TIMEOUT' }, alsoDuring)
  health.announce(log.logger)
  assert.equal(health.outage, undefined)
  assert.deepEqual(
    log.lines.map((l) => l.msg),
    ['store unavailable', 'store available again'],
  )
})

test('a read does not end a read-only outage (25006), a write does; any other outage ends with a read too', () => {
  const log = capturedLogger()
  const health = new StoreHealth()
  health.failed({ kind: 'unreachable', type: 'DatabaseError', code: '25006' }, health.epoch)
  health.announce(log.logger)
  // Reads still succeed on a read-only server: they prove nothing about writes.
  health.succeeded(health.epoch, 'read')
  health.succeeded(health.epoch, 'read')
  assert.equal(health.outage?.code, '25006')
  health.succeeded(health.epoch, 'write')
  assert.equal(health.outage, undefined)
  // Unreachable, frozen, out of disk…: any call that reaches the store ends the outage, a read as well.
  health.failed({ kind: 'unreachable', type: 'DatabaseError', code: '57P01' }, health.epoch)
  health.announce(log.logger)
  health.succeeded(health.epoch, 'read')
  assert.equal(health.outage, undefined)
  // The default is a write (only calls marked as reads are exempt).
  health.failed({ kind: 'unreachable', type: 'DatabaseError', code: '25006' }, health.epoch)
  health.announce(log.logger)
  health.succeeded(health.epoch)
  assert.equal(health.outage, undefined)
  assert.deepEqual(
    log.lines.map((l) => [l.msg, (l.store_error as { code: string }).code]),
    [
      ['store unavailable', '25006'],
      ['store available again', '25006'],
      ['store unavailable', '57P01'],
      ['store available again', '57P01'],
      ['store unavailable', '25006'],
      ['store available again', '25006'],
    ],
  )
})
