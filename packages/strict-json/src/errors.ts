// Every failure of the strict reader is a StrictJsonError with one of these stable codes. Messages are fixed per
// code and never contain input text: callers may log them next to untrusted data without leaking it.

/** Stable error codes with their fixed messages. Retired codes are never reused. */
export const STRICT_JSON_ERROR_MESSAGES = {
  ERR_STRICT_JSON_BOM: 'input starts with a UTF-8 byte order mark',
  ERR_STRICT_JSON_INVALID_UTF8: 'input is not well-formed UTF-8',
  ERR_STRICT_JSON_TOO_LARGE: 'input is larger than the byte limit',
  ERR_STRICT_JSON_TOO_DEEP: 'input nests arrays/objects deeper than the depth limit',
  ERR_STRICT_JSON_DUPLICATE_KEY: 'an object has the same member name twice',
  ERR_STRICT_JSON_SYNTAX: 'input is not valid JSON',
  ERR_STRICT_JSON_NON_FINITE: 'NaN and Infinity are not JSON numbers',
  ERR_STRICT_JSON_NUMBER_OVERFLOW: 'a number is too large for a double',
  ERR_STRICT_JSON_LONE_SURROGATE: 'a string escape is an unpaired UTF-16 surrogate',
  ERR_STRICT_JSON_TRAILING_CONTENT: 'input has content after the JSON value',
  ERR_STRICT_JSON_NOT_INTEGER: 'a number has a fraction or exponent where an integer is required',
  ERR_STRICT_JSON_UNSAFE_INTEGER: 'an integer is outside the exactly representable range ±(2^53-1)',
} as const

/** Union of every code a StrictJsonError can carry; switch on it. */
export type StrictJsonErrorCode = keyof typeof STRICT_JSON_ERROR_MESSAGES

/** The codes in declaration order. */
export const STRICT_JSON_ERROR_CODES = Object.keys(STRICT_JSON_ERROR_MESSAGES) as readonly StrictJsonErrorCode[]

/** Thrown by every reader in this package. `offset` is a byte offset into the input where known. */
export class StrictJsonError extends Error {
  readonly code: StrictJsonErrorCode
  readonly offset: number | undefined

  constructor(code: StrictJsonErrorCode, offset?: number) {
    super(
      offset === undefined ? STRICT_JSON_ERROR_MESSAGES[code] : `${STRICT_JSON_ERROR_MESSAGES[code]} (byte ${offset})`,
    )
    this.name = 'StrictJsonError'
    this.code = code
    this.offset = offset
  }
}
