// One key, many concurrent calls: exactly one refund; the rest answer in_progress (retryable) or the same result.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DemoLedger, demoLedgerStore, openSqliteStore, type RefundCommand } from '../src/index.js'
import { attempt, type CallResult, delegateBilling, type Era, newKey, startTestProvider } from './helpers.js'

const ERAS: Era[] = ['modern', 'legacy', 'v1']
const args = (key: string) => ({
  idempotency_key: key,
  request: {
    transaction_ref: 'ch_9001',
    amount: { amount_minor: 700, currency: 'USD' },
    reason: 'duplicate_charge',
    dry_run: false,
  },
})

function classify(results: CallResult[]) {
  const succeeded = results.filter((r) => r.isError !== true)
  const inProgress = results.filter((r) => r.isError === true)
  for (const r of inProgress) {
    assert.deepEqual(r.structuredContent, {
      error: { code: 'in_progress', message: 'a call with this key is still running; retry later', retryable: true },
    })
  }
  return { succeeded, inProgress }
}

test('20 concurrent attempts with one key make exactly one refund (demo ledger, mixed client eras)', async () => {
  const p = await startTestProvider()
  try {
    const key = newKey()
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => attempt(p.url, ERAS[i % 3] as Era, 'sr_refund', args(key))),
    )
    const { succeeded } = classify(results)
    assert.ok(succeeded.length >= 1)
    for (const r of succeeded) assert.deepEqual(r.structuredContent, succeeded[0]?.structuredContent)
    const tx = await p.billing.getTransaction('ch_9001')
    const mine = ((tx?.refunds ?? []) as { idempotency_key: string }[]).filter((r) => r.idempotency_key === key)
    assert.equal(mine.length, 1)
    // The key's one recorded outcome is that refund, the one every caller was answered.
    const row = await p.store.get(key)
    assert.equal(row?.status, 'succeeded')
    assert.equal(row?.result?.refund_ref, succeeded[0]?.structuredContent?.refund_ref)
  } finally {
    await p.stop()
  }
})

test('while the first call is inside the billing system, the other 19 answer in_progress and do not run', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-gate-'))
  const store = openSqliteStore(join(dir, 'ledger.sqlite'))
  const ledger = new DemoLedger(demoLedgerStore(store))
  await ledger.seed()
  let calls = 0
  let release!: () => void
  const gate = new Promise<void>((r) => {
    release = r
  })
  let entered!: () => void
  const inside = new Promise<void>((r) => {
    entered = r
  })
  const billing = delegateBilling(ledger, {
    refund: async (key: string, command: RefundCommand) => {
      calls++
      entered()
      await gate
      return ledger.refund(key, command)
    },
  })
  const p = await startTestProvider({ billing })
  try {
    const key = newKey()
    const first = attempt(p.url, 'modern', 'sr_refund', args(key))
    await inside
    const others = await Promise.all(
      Array.from({ length: 19 }, (_, i) => attempt(p.url, ERAS[i % 3] as Era, 'sr_refund', args(key))),
    )
    assert.equal(classify(others).inProgress.length, 19)
    const op = await attempt(p.url, 'legacy', 'sr_get_operation', { idempotency_key: key })
    assert.equal(op.structuredContent?.status, 'pending')
    release()
    const done = await first
    assert.equal(done.structuredContent?.status, 'succeeded')
    const replay = await attempt(p.url, 'v1', 'sr_refund', args(key))
    assert.deepEqual(replay.structuredContent, done.structuredContent)
    assert.equal(calls, 1)
  } finally {
    release()
    await p.stop()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
