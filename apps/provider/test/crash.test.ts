// Exactly once across a crash: the real server process is SIGKILLed after the billing system committed a refund
// and before the server recorded the outcome; a restart on the same database and a retry with the same key finish
// the operation from billing.lookup(key), and the ledger holds exactly one refund.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { runFakemerchant } from './fakemerchant-process.js'
import { attempt, type CallResult, newKey, SECRET } from './helpers.js'

const HOOK = 'TOLLGATE_PROVIDER_TEST_HANG_AFTER_REFUND'

async function spawnFakemerchant(db: string, env: Record<string, string>, durability: string) {
  const run = runFakemerchant(['--port', '0', '--db', db, '--lease-ms', '200', '--durability', durability], {
    ...process.env,
    SIGNING_SECRET: SECRET,
    ...env,
  })
  return { ...run, url: await run.serving() }
}

const args = (key: string) => ({
  idempotency_key: key,
  // The full amount: a blind re-run would now be refused (nothing left), so only billing.lookup(key) can answer right.
  request: {
    transaction_ref: 'ch_1001',
    amount: { amount_minor: 4999, currency: 'USD' },
    reason: 'service_issue',
    dry_run: false,
  },
})

// Both durabilities survive the process being killed (they differ on power loss, which a test cannot cut).
for (const durability of ['power-loss', 'process-crash']) {
  test(`${durability}: SIGKILL between the billing commit and the outcome record: a retry finishes it, one refund in the ledger`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-crash-'))
    const db = join(dir, 'fakemerchant.sqlite')
    const children: ChildProcess[] = []
    try {
      const first = await spawnFakemerchant(db, { [HOOK]: 'ch_1001' }, durability)
      children.push(first.child)
      const key = newKey()
      const inflight = attempt(first.url, 'modern', 'sr_refund', args(key)).catch((e: unknown) => e)
      while (!first.stderr().includes('TEST-HOOK hanging after refund commit')) {
        if (first.child.exitCode !== null) throw new Error('server exited early')
        await sleep(20)
      }
      first.child.kill('SIGKILL')
      await first.exited
      assert.ok((await inflight) instanceof Error, 'the attempt in flight never got an answer')

      const second = await spawnFakemerchant(db, {}, durability)
      children.push(second.child)
      // The dead process's claim blocks the key until its lease (200 ms) ends: in_progress, retryable, until then.
      let answer: CallResult | undefined
      for (let i = 0; i < 200; i++) {
        answer = await attempt(second.url, i % 2 === 0 ? 'legacy' : 'modern', 'sr_refund', args(key))
        const code = (answer.structuredContent?.error as { code: string } | undefined)?.code
        if (code !== 'in_progress') break
        await sleep(50)
      }
      assert.equal(answer?.isError ?? false, false, JSON.stringify(answer?.structuredContent))
      assert.equal(answer?.structuredContent?.status, 'succeeded')
      assert.equal(answer?.structuredContent?.idempotency_key, key)
      const tx = await attempt(second.url, 'v1', 'sr_get_transaction', { transaction_ref: 'ch_1001' })
      const refunds = tx.structuredContent?.refunds as { idempotency_key: string }[]
      assert.deepEqual(
        refunds.map((r) => r.idempotency_key),
        [key],
      )
      const op = await attempt(second.url, 'modern', 'sr_get_operation', { idempotency_key: key })
      assert.equal(op.structuredContent?.status, 'succeeded')
      assert.deepEqual(op.structuredContent?.result, answer?.structuredContent)
      // And once more: a plain replay, still one refund.
      const replay = await attempt(second.url, 'v1', 'sr_refund', args(key))
      assert.deepEqual(replay.structuredContent, answer?.structuredContent)
      second.child.kill('SIGTERM')
      assert.equal(await second.exited, 0)
    } finally {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('fakemerchant without SIGNING_SECRET refuses to start and says how to set one', async () => {
  const env = { ...process.env }
  delete env.SIGNING_SECRET
  const run = runFakemerchant(['--port', '0'], env)
  const code = await run.exited
  const err = run.stderr()
  assert.equal(code, 2)
  assert.match(err, /SIGNING_SECRET=srmps_/)
  assert.match(err, /npx fakemerchant/)
})

test('fakemerchant refuses an unknown --durability as a usage error naming the choices', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-durability-flag-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const db = join(dir, 'f.sqlite')
  const run = runFakemerchant(['--port', '0', '--db', db, '--durability', 'fast'])
  const code = await run.exited
  const err = run.stderr()
  assert.equal(code, 2)
  assert.equal(err, 'fakemerchant: --durability must be power-loss or process-crash\nsee fakemerchant --help\n')
})
