// The kit's own proof: the real provider behind a proxy that breaks one rule fails exactly the check naming
// that rule, with its code; checks resting on it are skipped; every other check still passes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PlatformClient } from '@tollgate/platform-client'
import { CHECK_IDS, CHECKS, CheckFailure } from '../src/index.js'
import type { Fault } from './support/fault-proxy.js'
import { FIXTURES, freshTarget, runAgainst, SECRET, verdicts } from './support/kit-harness.js'

// The full id list is pinned as literals in line-format.pins.test.ts; here every id must get a verdict.
const IDS: readonly string[] = CHECK_IDS
// What a check ends with when no fault touches it: pass, except the REST-only check over MCP.
const untouched = (id: string) => (id === 'signature_idempotency_key' ? 'skip not_applicable' : 'pass')
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
  {
    // The seed's 2000.0: only sr_refund's answers carry the refunded amount (the dry run's and the refund's own).
    fault: 'refund_amount_float',
    fails: { refund_dry_run: 'number_not_integer', refund: 'number_not_integer' },
    skips: ['refund_replay', 'refund_conflict', 'get_operation'],
  },
  { fault: 'duplicated_tool', fails: { mcp_profile: 'mcp_tool_duplicated' }, skips: AFTER_PROFILE },
  { fault: 'schema_defs', fails: { mcp_profile: 'mcp_schema_too_complex' }, skips: AFTER_PROFILE },
  { fault: 'foreign_ref', fails: { mcp_profile: 'mcp_schema_too_complex' }, skips: AFTER_PROFILE },
  { fault: 'deep_schema', fails: { mcp_profile: 'mcp_schema_too_complex' }, skips: AFTER_PROFILE },
  // Deeper than the platform reads a tools/list page at all: still the schema rule, not invalid_json.
  { fault: 'very_deep_schema', fails: { mcp_profile: 'mcp_schema_too_complex' }, skips: AFTER_PROFILE },
  { fault: 'six_pages', fails: { mcp_profile: 'mcp_tool_list_too_long' }, skips: AFTER_PROFILE },
  // One fault, one failing line: the check that calls the missing tool is skipped, not failed a second time.
  {
    fault: 'missing_capability_tool',
    fails: { mcp_profile: 'mcp_tool_missing' },
    skips: [...AFTER_PROFILE, 'cancel_dry_run'],
  },
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
          fails[id] !== undefined ? `fail ${fails[id]}` : skips.includes(id) ? 'skip dependency_failed' : untouched(id),
        ]),
      )
      assert.deepEqual(verdicts(run.results), expected)
      assert.equal(run.passed, Object.keys(fails).length === 0)
    } finally {
      await target.close()
    }
  })
}

test('a provider without the optional cancel_subscription capability passes; its cancel checks are not_applicable', async () => {
  const target = await freshTarget('no_cancel_capability')
  try {
    const run = await runAgainst(target.url)
    const cancel = ['get_subscription', 'cancel_dry_run', 'cancel_at_period_end', 'cancel_again']
    const expected = Object.fromEntries(
      IDS.map((id) => [id, cancel.includes(id) ? 'skip not_applicable' : untouched(id)]),
    )
    assert.deepEqual(verdicts(run.results), expected)
    // A capability the provider does not offer is not a failure; a skip for a failed precondition would be.
    assert.equal(run.passed, true)
  } finally {
    await target.close()
  }
})

test('a tools/list that never answers fails mcp_profile with mcp_profile_timeout within a lowered budget', async () => {
  // The proxy never answers tools/list, so the outcome does not depend on how fast this machine is.
  const target = await freshTarget('list_never_answers')
  try {
    const run = await runAgainst(target.url, 'auto', 200)
    const expected = Object.fromEntries(
      IDS.map((id) => [
        id,
        id === 'mcp_profile'
          ? 'fail mcp_profile_timeout'
          : AFTER_PROFILE.includes(id)
            ? 'skip dependency_failed'
            : untouched(id),
      ]),
    )
    assert.deepEqual(verdicts(run.results), expected)
  } finally {
    await target.close()
  }
})

test('a profile judged past the 15 s budget on the kit clock fails with mcp_profile_timeout', async () => {
  // An injected clock: 0 when the check starts, 15 001 ms when it ends; tools/list itself answers at once.
  const target = await freshTarget()
  try {
    const check = CHECKS.find((c) => c.id === 'mcp_profile')
    assert.ok(check)
    const ticks = [0, 15_001]
    const ctx = kitContext(target.url, () => ticks.shift() ?? 15_001)
    await assert.rejects(
      check.run(ctx),
      (e: unknown) => e instanceof CheckFailure && e.failureCode === 'mcp_profile_timeout',
    )
    const onTime = kitContext(target.url, () => 0)
    assert.match(await check.run(onTime), /profile tools within limits and compatible/)
  } finally {
    await target.close()
  }
})

function kitContext(url: string, now: () => number): Parameters<(typeof CHECKS)[number]['run']>[0] {
  return {
    client: new PlatformClient({ baseUrl: url, secret: SECRET, allowPrivate: true, eraCache: new Map() }),
    transport: 'mcp',
    fixtures: FIXTURES,
    call: { correlationId: 'c-1', channel: 'ticket' },
    state: {
      describe: {
        capabilities: { partial_refunds: true, cancel_subscription: true, cancel_at_period_end: true },
        currencies: ['USD'],
      },
    },
    newKey: (operation) => `${FIXTURES.tenant}:ticket:c-1:${operation}:k`,
    profileBudgetMs: 15_000,
    now,
    credentials: { bearerToken: false, edgeHeaderNames: [] },
  }
}
