import { type JsonValue, parseStrict, StrictJsonError, type StrictJsonErrorCode } from '@tollgate/strict-json'
import { type Diagnostic, resultFor } from './diagnostics.js'
import {
  hasExactKeys,
  isAmountMinor,
  isCurrency,
  isExampleId,
  isJsonInteger,
  isObject,
  isRpcId,
  sameInteger,
  sameRpcId,
} from './internal/fields.js'
import type { PreflightResult } from './outcomes.js'

/** The largest input read or parsed: 1 MiB, JSON whitespace included. */
export const MAX_INPUT_BYTES = 1_048_576
/** Nesting limit for the whole document (the profile itself needs 4 levels; `content`/`_meta` may add more). */
export const MAX_INPUT_DEPTH = 64

const CURRENT_PROFILE = '2026-07-28'
const LEGACY_PROFILE = '2025-11-25'

const PARSE_DIAGNOSTICS: Record<StrictJsonErrorCode, Diagnostic> = {
  ERR_STRICT_JSON_BOM: 'input_bom',
  ERR_STRICT_JSON_INVALID_UTF8: 'input_invalid_utf8',
  ERR_STRICT_JSON_TOO_LARGE: 'input_too_large',
  ERR_STRICT_JSON_TOO_DEEP: 'input_too_deep',
  ERR_STRICT_JSON_DUPLICATE_KEY: 'input_duplicate_key',
  ERR_STRICT_JSON_SYNTAX: 'input_malformed_json',
  ERR_STRICT_JSON_NON_FINITE: 'input_non_finite_number',
  ERR_STRICT_JSON_NUMBER_OVERFLOW: 'input_number_overflow',
  ERR_STRICT_JSON_LONE_SURROGATE: 'input_lone_surrogate',
  ERR_STRICT_JSON_TRAILING_CONTENT: 'input_trailing_content',
  // Not produced by parseStrict; mapped so that every code has a diagnostic.
  ERR_STRICT_JSON_NOT_INTEGER: 'input_malformed_json',
  ERR_STRICT_JSON_UNSAFE_INTEGER: 'input_malformed_json',
}

/** Maps a strict-json failure (parse or bounded read) to its invalid_input result. */
export function parseFailureResult(e: StrictJsonError): PreflightResult {
  return resultFor(PARSE_DIAGNOSTICS[e.code])
}

/**
 * Checks one input document (the bytes of the file) against the seed's profile and returns the outcome.
 * Never throws: an unexpected fault is reported as internal_error, without its text.
 */
export function check(bytes: Uint8Array): PreflightResult {
  let doc: JsonValue
  try {
    doc = parseStrict(bytes, { maxBytes: MAX_INPUT_BYTES, maxDepth: MAX_INPUT_DEPTH })
  } catch (e) {
    if (e instanceof StrictJsonError) return parseFailureResult(e)
    return resultFor('internal_error')
  }
  try {
    return resultFor(checkDocument(doc))
  } catch {
    return resultFor('internal_error')
  }
}

/** The seed's order of checks; returns the first diagnostic that applies. */
function checkDocument(doc: JsonValue): Diagnostic {
  // 1. input, expected, version
  if (!isObject(doc)) return 'input_not_object'
  if (!hasExactKeys(doc, ['protocol_version', 'expected', 'response'])) return 'input_fields_invalid'
  const expected = doc.expected
  if (!isObject(expected)) return 'expected_not_object'
  if (!hasExactKeys(expected, ['rpc_id', 'order_id', 'amount_minor', 'currency'])) return 'expected_fields_invalid'
  if (!isRpcId(expected.rpc_id)) return 'expected_rpc_id_invalid'
  if (!isExampleId(expected.order_id)) return 'expected_order_id_invalid'
  if (!isAmountMinor(expected.amount_minor)) return 'expected_amount_minor_invalid'
  if (!isCurrency(expected.currency)) return 'expected_currency_invalid'
  const version = doc.protocol_version
  if (typeof version !== 'string') return 'protocol_version_invalid'
  if (version !== CURRENT_PROFILE && version !== LEGACY_PROFILE) return 'protocol_version_unsupported'

  // 2. envelope and typed RPC id
  const response = doc.response
  if (!isObject(response)) return 'response_not_object'
  const hasResult = Object.hasOwn(response, 'result')
  const hasError = Object.hasOwn(response, 'error')
  if (hasResult && hasError) return 'response_channel_ambiguous'
  if (!hasResult && !hasError) return 'response_channel_missing'
  if (!hasExactKeys(response, ['jsonrpc', 'id'], ['result', 'error'])) return 'response_fields_invalid'
  if (response.jsonrpc !== '2.0') return 'jsonrpc_version_invalid'
  if (!isRpcId(response.id)) return 'rpc_id_invalid'
  if (!sameRpcId(expected.rpc_id, response.id)) return 'rpc_id_mismatch'

  // 3. error channel, or result types and version
  if (hasError) {
    const error = response.error
    if (!isObject(error) || !hasExactKeys(error, ['code', 'message'], ['data'])) return 'rpc_error_invalid'
    if (!isJsonInteger(error.code) || typeof error.message !== 'string') return 'rpc_error_invalid'
    return 'rpc_error_response'
  }
  const result = response.result
  if (!isObject(result)) return 'result_not_object'
  if (Object.hasOwn(result, 'resultType')) {
    const resultType = result.resultType
    if (typeof resultType !== 'string' || resultType === '') return 'result_type_invalid'
    // Refused before any receipt check: an unsupported result kind is not a complete receipt.
    if (resultType !== 'complete') return 'result_type_unsupported'
  } else if (version === CURRENT_PROFILE) {
    return 'result_type_missing'
  }
  if (Object.hasOwn(result, 'isError') && typeof result.isError !== 'boolean') return 'is_error_invalid'

  // 4. isError wins over any structured success next to it
  if (result.isError === true) return 'tool_error_flagged'

  // 5. receipt shape and types (content, _meta and other result fields are deliberately not validated)
  if (!Object.hasOwn(result, 'structuredContent')) return 'structured_content_missing'
  const receipt = result.structuredContent
  if (!isObject(receipt)) return 'receipt_not_object'
  if (!hasExactKeys(receipt, ['refund_id', 'order_id', 'amount_minor', 'currency', 'status'])) {
    return 'receipt_fields_invalid'
  }
  if (!isExampleId(receipt.refund_id)) return 'receipt_refund_id_invalid'
  if (!isExampleId(receipt.order_id)) return 'receipt_order_id_invalid'
  if (!isAmountMinor(receipt.amount_minor)) return 'receipt_amount_minor_invalid'
  if (!isCurrency(receipt.currency)) return 'receipt_currency_invalid'
  const status = receipt.status
  if (status !== 'succeeded' && status !== 'pending' && status !== 'failed') return 'receipt_status_invalid'

  // 6. match against the explicit expectation: a mismatch beats pending/failed
  if (receipt.order_id !== expected.order_id) return 'expected_order_id_mismatch'
  if (!sameInteger(receipt.amount_minor, expected.amount_minor)) return 'expected_amount_mismatch'
  if (receipt.currency !== expected.currency) return 'expected_currency_mismatch'

  // 7. status
  if (status === 'pending') return 'refund_status_pending'
  if (status === 'failed') return 'refund_status_failed'
  return 'educational_expected_match'
}
