// The kit's own proof: the real provider behind a proxy that breaks one rule fails exactly the check naming
// that rule, with its code; checks resting on it are skipped; every other check still passes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Fault } from './support/fault-proxy.js'
import { freshTarget, runAgainst, verdicts } from './support/kit-harness.js'

const IDS = [
  'discovery',
  'describe',
  'mcp_profile',
  'find_customers',
  'get_customer',
  'list_transactions',
  'get_transaction',
  'get_subscription',
  'refund_dry_run',
  'refund',
  'refund_replay',
  'refund_conflict',
  'refund_exceeds',
  'get_operation',
  'get_operation_unknown',
  'cancel_dry_run',
  'cancel_at_period_end',
  'cancel_again',
  'signature_tool_call',
  'signature_stale',
]
// Data-changing checks run only after mcp_profile passes.
const AFTER_PROFILE = [
  'refund',
  'refund_replay',
  'refund_conflict',
  'refund_exceeds',
  'get_operation',
  'cancel_at_period_end',
  'cancel_again',
]
const AFTER_TRANSACTION_AND_SUBSCRIPTION = [
  'refund_dry_run',
  'refund',
  'refund_replay',
  'refund_conflict',
  'refund_exceeds',
  'get_operation',
  'cancel_dry_run',
  'cancel_at_period_end',
  'cancel_again',
]

const MATRIX: { fault: Fault; fails: Record<string, string>; skips: string[] }[] = [
  { fault: 'tool_call_signature_unchecked', fails: { signature_tool_call: 'signature_not_verified' }, skips: [] },
  { fault: 'conflict_not_detected', fails: { refund_conflict: 'conflict_not_detected' }, skips: [] },
  { fault: 'replay_differs', fails: { refund_replay: 'replay_differs' }, skips: [] },
  {
    // 4999.0 touches every answer that carries the charge's amount: the list, the charge, the subscription's last charge.
    fault: 'float_amounts',
    fails: {
      list_transactions: 'number_not_integer',
      get_transaction: 'number_not_integer',
      get_subscription: 'number_not_integer',
    },
    skips: AFTER_TRANSACTION_AND_SUBSCRIPTION,
  },
  { fault: 'duplicated_tool', fails: { mcp_profile: 'mcp_tool_duplicated' }, skips: AFTER_PROFILE },
  { fault: 'schema_defs', fails: { mcp_profile: 'mcp_schema_too_complex' }, skips: AFTER_PROFILE },
  { fault: 'foreign_ref', fails: { mcp_profile: 'mcp_schema_too_complex' }, skips: AFTER_PROFILE },
  { fault: 'deep_schema', fails: { mcp_profile: 'mcp_schema_too_complex' }, skips: AFTER_PROFILE },
  { fault: 'six_pages', fails: { mcp_profile: 'mcp_tool_list_too_long' }, skips: AFTER_PROFILE },
  { fault: 'missing_capability_tool', fails: { mcp_profile: 'mcp_tool_missing' }, skips: AFTER_PROFILE },
  // Controls: the proxy itself is transparent, and five pages are within the limit.
  { fault: 'none', fails: {}, skips: [] },
  { fault: 'five_pages', fails: {}, skips: [] },
]

for (const { fault, fails, skips } of MATRIX) {
  const name =
    Object.keys(fails).length === 0
      ? `control: ${fault} passes every check`
      : `${fault} fails ${Object.entries(fails)
          .map(([id, code]) => `${id} (${code})`)
          .join(', ')} and nothing else`
  test(name, async () => {
    const target = await freshTarget(fault)
    try {
      const run = await runAgainst(target.url)
      const expected = Object.fromEntries(
        IDS.map((id) => [
          id,
          fails[id] !== undefined ? `fail ${fails[id]}` : skips.includes(id) ? 'skip dependency_failed' : 'pass',
        ]),
      )
      assert.deepEqual(verdicts(run.results), expected)
      assert.equal(run.passed, Object.keys(fails).length === 0)
    } finally {
      await target.close()
    }
  })
}

test('a profile check that overruns its budget fails mcp_profile with mcp_profile_timeout', async () => {
  const target = await freshTarget('slow_list')
  try {
    const got = verdicts((await runAgainst(target.url, 'auto', 200)).results)
    assert.equal(got.mcp_profile, 'fail mcp_profile_timeout')
    for (const id of AFTER_PROFILE) assert.equal(got[id], 'skip dependency_failed', id)
    assert.equal(got.get_transaction, 'pass')
  } finally {
    await target.close()
  }
})
