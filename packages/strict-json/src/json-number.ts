import { StrictJsonError } from './errors.js'

// Lets the parser skip re-validating a lexeme it has just scanned; not exported from the package.
export const TRUSTED: unique symbol = Symbol('trusted lexeme')

const NUMBER_LEXEME = /^-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/

/**
 * A JSON number kept exactly as written. `isInteger` is true when the lexeme has neither fraction nor exponent
 * (`1500`; not `1500.0`, not `15e2`). The double value is always finite (the parser rejects overflow).
 */
export class JsonNumber {
  readonly lexeme: string
  readonly isInteger: boolean

  /** Builds a number from a JSON number lexeme; throws ERR_STRICT_JSON_SYNTAX / _NUMBER_OVERFLOW on a bad one. */
  constructor(lexeme: string)
  /** @internal used by the parser on an already-scanned lexeme */
  constructor(lexeme: string, trusted: typeof TRUSTED, isInteger: boolean)
  constructor(lexeme: string, trusted?: typeof TRUSTED, isInteger?: boolean) {
    if (trusted === TRUSTED) {
      this.lexeme = lexeme
      this.isInteger = isInteger as boolean
      return
    }
    const m = typeof lexeme === 'string' ? NUMBER_LEXEME.exec(lexeme) : null
    if (m === null) throw new StrictJsonError('ERR_STRICT_JSON_SYNTAX')
    const v = Number(lexeme)
    if (!Number.isFinite(v)) throw new StrictJsonError('ERR_STRICT_JSON_NUMBER_OVERFLOW')
    this.lexeme = lexeme
    this.isInteger = m[1] === undefined && m[2] === undefined
  }

  /** The nearest double (may round: compare integers with toBigInt). */
  toNumber(): number {
    // Recomputed rather than stored: keeps each parsed number to two fields (fewer heap numbers to collect).
    return +this.lexeme
  }

  /** The exact integer value; throws ERR_STRICT_JSON_NOT_INTEGER when the lexeme has a fraction or exponent. */
  toBigInt(): bigint {
    if (!this.isInteger) throw new StrictJsonError('ERR_STRICT_JSON_NOT_INTEGER')
    return BigInt(this.lexeme)
  }

  /** The lexeme, so that String(n) and template strings show the number as written. */
  toString(): string {
    return this.lexeme
  }
}
