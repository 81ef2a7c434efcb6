// Keys, results and refunds survive a restart on the same SQLite file.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { attempt, newKey, startTestProvider } from './helpers.js'

test('a restarted server replays keys from before the restart and keeps the ledger', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-restart-'))
  const key = newKey()
  const refusalKey = newKey()
  const args = (k: string, amount: number) => ({
    idempotency_key: k,
    request: {
      transaction_ref: 'ch_1001',
      amount: { amount_minor: amount, currency: 'USD' },
      reason: 'goodwill',
      dry_run: false,
    },
  })
  try {
    const a = await startTestProvider({}, dir)
    const first = await attempt(a.url, 'modern', 'sr_refund', args(key, 1500))
    const refused = await attempt(a.url, 'legacy', 'sr_refund', args(refusalKey, 9999))
    await a.stop()

    const b = await startTestProvider({}, dir)
    try {
      assert.deepEqual(
        (await attempt(b.url, 'v1', 'sr_refund', args(key, 1500))).structuredContent,
        first.structuredContent,
      )
      assert.deepEqual(
        (await attempt(b.url, 'modern', 'sr_refund', args(refusalKey, 9999))).structuredContent,
        refused.structuredContent,
      )
      const conflict = await attempt(b.url, 'legacy', 'sr_refund', args(key, 1501))
      assert.equal((conflict.structuredContent?.error as { code: string } | undefined)?.code, 'idempotency_conflict')
      const op = await attempt(b.url, 'modern', 'sr_get_operation', { idempotency_key: key })
      assert.equal(op.structuredContent?.status, 'succeeded')
      const tx = await attempt(b.url, 'modern', 'sr_get_transaction', { transaction_ref: 'ch_1001' })
      assert.equal((tx.structuredContent?.refunds as unknown[] | undefined)?.length, 1)
    } finally {
      await b.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
