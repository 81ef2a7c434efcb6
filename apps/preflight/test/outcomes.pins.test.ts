import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DIAGNOSTICS, EXIT_CODES, formatResult, resultFor, VERSION } from '@tollgate/preflight'

// Literal pins of the observable surface (seed 000's exit code table). A deliberate change updates these and
// adds a CHANGELOG line.
test('outcome → exit code table is pinned', () => {
  assert.deepEqual(
    { ...EXIT_CODES },
    {
      consistent_sample: 0,
      usage: 0,
      mismatch: 1,
      pending: 1,
      failed: 1,
      rpc_error: 1,
      tool_error: 1,
      missing_receipt: 1,
      invalid_input: 2,
      invalid_envelope: 2,
      invalid_receipt: 2,
      internal_error: 2,
      out_of_scope: 3,
      input_io_error: 4,
    },
  )
})

test('version is pinned', () => {
  assert.equal(VERSION, '0.1.0')
})

test('the output line form is pinned to the seed example', () => {
  assert.equal(
    formatResult(resultFor('educational_expected_match')),
    '{"diagnostic":"educational_expected_match","exit_code":0,"outcome":"consistent_sample","version":"0.1.0"}\n',
  )
  assert.equal(
    formatResult(resultFor('expected_amount_mismatch')),
    '{"diagnostic":"expected_amount_mismatch","exit_code":1,"outcome":"mismatch","version":"0.1.0"}\n',
  )
})

test('diagnostic → outcome table is pinned', () => {
  assert.deepEqual(
    { ...DIAGNOSTICS },
    {
      educational_expected_match: 'consistent_sample',
      usage_check_one_file: 'usage',
      argument_count_invalid: 'invalid_input',
      argument_unknown_option: 'invalid_input',
      argument_empty_path: 'invalid_input',
      input_too_large: 'invalid_input',
      input_bom: 'invalid_input',
      input_invalid_utf8: 'invalid_input',
      input_malformed_json: 'invalid_input',
      input_trailing_content: 'invalid_input',
      input_duplicate_key: 'invalid_input',
      input_non_finite_number: 'invalid_input',
      input_number_overflow: 'invalid_input',
      input_lone_surrogate: 'invalid_input',
      input_too_deep: 'invalid_input',
      input_not_object: 'invalid_input',
      input_fields_invalid: 'invalid_input',
      expected_not_object: 'invalid_input',
      expected_fields_invalid: 'invalid_input',
      expected_rpc_id_invalid: 'invalid_input',
      expected_order_id_invalid: 'invalid_input',
      expected_amount_minor_invalid: 'invalid_input',
      expected_currency_invalid: 'invalid_input',
      protocol_version_invalid: 'invalid_input',
      protocol_version_unsupported: 'out_of_scope',
      result_type_unsupported: 'out_of_scope',
      response_not_object: 'invalid_envelope',
      response_fields_invalid: 'invalid_envelope',
      response_channel_ambiguous: 'invalid_envelope',
      response_channel_missing: 'invalid_envelope',
      jsonrpc_version_invalid: 'invalid_envelope',
      rpc_id_invalid: 'invalid_envelope',
      rpc_id_mismatch: 'invalid_envelope',
      rpc_error_invalid: 'invalid_envelope',
      result_not_object: 'invalid_envelope',
      result_type_missing: 'invalid_envelope',
      result_type_invalid: 'invalid_envelope',
      is_error_invalid: 'invalid_envelope',
      rpc_error_response: 'rpc_error',
      tool_error_flagged: 'tool_error',
      structured_content_missing: 'missing_receipt',
      receipt_not_object: 'invalid_receipt',
      receipt_fields_invalid: 'invalid_receipt',
      receipt_refund_id_invalid: 'invalid_receipt',
      receipt_order_id_invalid: 'invalid_receipt',
      receipt_amount_minor_invalid: 'invalid_receipt',
      receipt_currency_invalid: 'invalid_receipt',
      receipt_status_invalid: 'invalid_receipt',
      expected_order_id_mismatch: 'mismatch',
      expected_amount_mismatch: 'mismatch',
      expected_currency_mismatch: 'mismatch',
      refund_status_pending: 'pending',
      refund_status_failed: 'failed',
      path_symlink: 'input_io_error',
      path_not_regular_file: 'input_io_error',
      path_not_found: 'input_io_error',
      path_component_not_directory: 'input_io_error',
      path_permission_denied: 'input_io_error',
      path_open_failed: 'input_io_error',
      input_read_failed: 'input_io_error',
      platform_unsupported: 'input_io_error',
      internal_error: 'internal_error',
    },
  )
})

test('every outcome has at least one diagnostic', () => {
  const used = new Set(Object.values(DIAGNOSTICS))
  for (const outcome of Object.keys(EXIT_CODES)) assert.ok(used.has(outcome as never), outcome)
})
