// The refund and cancel dry-run checks share one verdict: would_succeed, no key, and nothing changed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { expectHarmlessDryRun } from '../src/checks/call-helpers.js'

const unchanged = { state: 'succeeded', refunds: [] }
const dryAnswer = { status: 'would_succeed', idempotency_key: null }

test('a would_succeed answer without a key that changed nothing passes', async () => {
  await expectHarmlessDryRun(dryAnswer, unchanged, async () => ({ refunds: [], state: 'succeeded' }), 'transaction')
})

test('another status, or a key on a dry run, is unexpected_result', async () => {
  await assert.rejects(
    expectHarmlessDryRun({ ...dryAnswer, status: 'succeeded' }, unchanged, async () => unchanged, 'transaction'),
    { failureCode: 'unexpected_result', message: 'a dry run answered status succeeded, expected would_succeed' },
  )
  await assert.rejects(
    expectHarmlessDryRun({ ...dryAnswer, idempotency_key: 'k' }, unchanged, async () => unchanged, 'transaction'),
    { failureCode: 'unexpected_result', message: 'a dry run answered an idempotency_key' },
  )
})

test('data that changed after the dry run is dry_run_changed_data, naming the object', async () => {
  await assert.rejects(
    expectHarmlessDryRun(dryAnswer, unchanged, async () => ({ ...unchanged, refunds: [{}] }), 'subscription'),
    { failureCode: 'dry_run_changed_data', message: 'the subscription changed after a dry run' },
  )
})
