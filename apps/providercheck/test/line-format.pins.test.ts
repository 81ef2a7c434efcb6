// Pins of the observable surface: check ids and order, the line format, exit codes. Literals, never imported values.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CHECK_IDS, EXIT, formatLine } from '../src/index.js'

test('check ids and their order are pinned', () => {
  assert.deepEqual(
    [...CHECK_IDS],
    [
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
      'signature_idempotency_key',
    ],
  )
})

test('a check line is id, verdict, code, reason and duration in fixed columns', () => {
  assert.equal(
    formatLine({
      id: 'refund_conflict',
      verdict: 'fail',
      code: 'conflict_not_detected',
      reason: 'sr_refund answered a result where idempotency_conflict was expected',
      durationMs: 7,
    }),
    'refund_conflict        fail  conflict_not_detected      sr_refund answered a result where idempotency_conflict was expected (7 ms)',
  )
  assert.equal(
    formatLine({
      id: 'discovery',
      verdict: 'pass',
      code: null,
      reason: '2026-07-28 server: server/discover',
      durationMs: 12,
    }),
    'discovery              pass  -                          2026-07-28 server: server/discover (12 ms)',
  )
})

test('exit codes are pinned', () => {
  assert.deepEqual(EXIT, { pass: 0, fail: 1, usage: 2 })
})
