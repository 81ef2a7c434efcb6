import { UnknownErrorCodeError } from './errors.js'

/** The contract's error codes (REST body / MCP isError envelope), with their HTTP statuses. */
const ERROR_STATUS: ReadonlyMap<string, number> = new Map([
  ['invalid_request', 400],
  ['credentials_rejected', 401],
  ['not_found', 404],
  ['idempotency_conflict', 409],
  ['in_progress', 409],
  ['rate_limited', 429],
  ['internal_error', 500],
  ['unavailable', 503],
])

/** The non-refusal error codes, in the seed's table order. */
export const ERROR_CODES: readonly string[] = Object.freeze([...ERROR_STATUS.keys()])

/** The contract's refusal codes (all 422); merchants add their own as x_… (MERCHANT_REFUSAL_PATTERN). */
export const REFUSAL_CODES: readonly string[] = Object.freeze([
  'amount_exceeds_refundable',
  'currency_mismatch',
  'not_refundable',
  'already_canceled',
  'subscription_not_active',
  'account_restricted',
  'merchant_hold',
])

/** A merchant's own refusal code: x_ then lower-case letters, digits, underscores; at most 64 characters. */
export const MERCHANT_REFUSAL_PATTERN = /^x_[a-z0-9_]{1,62}$/

/** True for a refusal code (contract or x_…): a final answer, HTTP 422. */
export function isRefusalCode(code: string): boolean {
  return REFUSAL_CODES.includes(code) || MERCHANT_REFUSAL_PATTERN.test(code)
}

/** True for any code an error envelope may carry. */
export function isWireErrorCode(code: string): boolean {
  return ERROR_STATUS.has(code) || isRefusalCode(code)
}

/**
 * The HTTP status an error code maps to (the seed's table): invalid_request 400, credentials_rejected 401,
 * not_found 404, idempotency_conflict and in_progress 409, refusal and x_ codes 422, rate_limited 429,
 * internal_error 500, unavailable 503. Throws UnknownErrorCodeError (ERR_CONTRACT_UNKNOWN_ERROR_CODE) otherwise.
 */
export function errorHttpStatus(code: string): number {
  const status = ERROR_STATUS.get(code)
  if (status !== undefined) return status
  if (typeof code === 'string' && isRefusalCode(code)) return 422
  throw new UnknownErrorCodeError()
}
