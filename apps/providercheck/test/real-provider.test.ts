import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CHECK_IDS } from '../src/index.js'
import { freshTarget, runAgainst, verdicts } from './support/kit-harness.js'

// Over MCP the REST-only signature_idempotency_key does not apply; everything else must pass.
const allPass = Object.fromEntries(
  CHECK_IDS.map((id) => [id, id === 'signature_idempotency_key' ? 'skip not_applicable' : 'pass']),
)

test('every check passes against a fresh real provider, and again after a restart on fresh data', async () => {
  for (const round of [1, 2]) {
    const target = await freshTarget()
    try {
      const run = await runAgainst(target.url)
      assert.deepEqual(verdicts(run.results), allPass, `round ${round}`)
      assert.equal(run.passed, true)
      assert.equal(run.era, '2026-07-28')
    } finally {
      await target.close()
    }
  }
})

test('every check passes against the real provider spoken to in the legacy era', async () => {
  const target = await freshTarget()
  try {
    const run = await runAgainst(target.url, 'legacy')
    assert.deepEqual(verdicts(run.results), allPass)
    assert.equal(run.era, 'legacy')
  } finally {
    await target.close()
  }
})

test('every check passes against the real provider answering every request as an SSE stream, in both eras', async () => {
  for (const era of ['2026-07-28', 'legacy'] as const) {
    const target = await freshTarget(undefined, 'sse')
    try {
      const run = await runAgainst(target.url, era)
      assert.deepEqual(verdicts(run.results), allPass, era)
    } finally {
      await target.close()
    }
  }
})

test('a second run without a restart names the exhausted fixture instead of blaming the provider', async () => {
  const target = await freshTarget()
  try {
    await runAgainst(target.url)
    const again = verdicts((await runAgainst(target.url)).results)
    assert.equal(again.cancel_dry_run, 'fail fixture_exhausted')
    const reason = (await runAgainst(target.url)).results.find((r) => r.id === 'cancel_dry_run')?.reason
    assert.equal(
      reason,
      'sub_1001 is already canceled: the cancel checks need an active (or trialing) subscription that is not set to cancel; pass one as -subscription',
    )
    assert.equal(again.cancel_at_period_end, 'fail fixture_exhausted')
    assert.equal(again.cancel_again, 'skip dependency_failed')
    assert.equal(again.refund, 'pass')
  } finally {
    await target.close()
  }
})
