// The demo ledger's refund refs are time-ordered: a later refund's ref sorts after an earlier one's, so the
// server's refunds table (keyed by refund ref) takes each refund at its index's end. Real HTTP, the official client.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { attempt, newKey, startTestProvider } from './helpers.js'

test('refund refs sort in the order the refunds were made, and are distinct within one millisecond', async () => {
  let clock = Date.UTC(2026, 11, 1, 12, 0, 0)
  const p = await startTestProvider({ now: () => clock })
  try {
    const refs: string[] = []
    for (let i = 0; i < 24; i++) {
      // Two refunds per millisecond: the random part keeps them apart.
      if (i % 2 === 0) clock += 1
      const answer = await attempt(p.url, 'modern', 'sr_refund', {
        idempotency_key: newKey(),
        request: {
          transaction_ref: 'ch_1001',
          amount: { amount_minor: 1, currency: 'USD' },
          reason: 'goodwill',
          dry_run: false,
        },
      })
      assert.equal(answer.structuredContent?.status, 'succeeded', JSON.stringify(answer.structuredContent))
      refs.push(String(answer.structuredContent?.refund_ref))
    }
    for (const ref of refs) assert.match(ref, /^re_[0-9a-f]{24}$/)
    assert.equal(new Set(refs).size, refs.length)
    // Pairs made in the same millisecond may sort either way; across milliseconds they are in order.
    for (let i = 2; i < refs.length; i++)
      assert.ok((refs[i] as string) > (refs[i - 2] as string), `${refs[i]} after ${refs[i - 2]}`)
    assert.equal((refs[0] as string).slice(3, 15), (clock - 11).toString(16).padStart(12, '0'))
  } finally {
    await p.stop()
  }
})
