import { EXIT_CODES, type Outcome, type PreflightResult, VERSION } from './outcomes.js'

// Every diagnostic is a fixed code tied to exactly one outcome. The README's diagnostics table lists the same
// codes (a test compares them). Never add a diagnostic that embeds input text.
export const DIAGNOSTICS = {
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
} as const satisfies Record<string, Outcome>

/** A documented diagnostic code. */
export type Diagnostic = keyof typeof DIAGNOSTICS

/** Builds the result for a diagnostic: its outcome and exit code follow from the tables. */
export function resultFor(diagnostic: Diagnostic): PreflightResult {
  const outcome = DIAGNOSTICS[diagnostic]
  return { diagnostic, exit_code: EXIT_CODES[outcome], outcome, version: VERSION }
}
