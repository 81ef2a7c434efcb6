// Local errors of @tollgate/contract: misuse of this library or a damaged package, never wire errors
// (those are the contract's error codes, see wire-errors.ts). Messages never echo the caller's input.

/** Every code a ContractError can carry. Retired codes are never reused. */
export type ContractErrorCode =
  | 'ERR_CONTRACT_UNKNOWN_SCHEMA'
  | 'ERR_CONTRACT_UNKNOWN_ERROR_CODE'
  | 'ERR_CONTRACT_SCHEMA_LOAD'
  | 'ERR_CONTRACT_EXAMPLES_UNREADABLE'

/** Base class: switch on `code`, never on the message. */
export abstract class ContractError extends Error {
  abstract readonly code: ContractErrorCode
  constructor(message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
  }
}

/** A ref that names no contract schema (nor a fragment inside one). */
export class UnknownSchemaError extends ContractError {
  override readonly code = 'ERR_CONTRACT_UNKNOWN_SCHEMA' as const
  constructor() {
    super('not a merchant-provider/v1 schema reference')
  }
}

/** errorHttpStatus was given a string that is neither an error code, a refusal code nor an x_ code. */
export class UnknownErrorCodeError extends ContractError {
  override readonly code = 'ERR_CONTRACT_UNKNOWN_ERROR_CODE' as const
  constructor() {
    super('not a merchant-provider/v1 error or refusal code')
  }
}

/** A schema file shipped with the package is missing, unparseable, or has a wrong $id (a packaging fault). */
export class SchemaLoadError extends ContractError {
  override readonly code = 'ERR_CONTRACT_SCHEMA_LOAD' as const
  /** The file name inside schemas/ (a package file, not caller input). */
  readonly file: string
  constructor(file: string, options?: ErrorOptions) {
    super('a contract schema file could not be loaded', options)
    this.file = file
  }
}

/** The examples/ directory shipped with the package is missing or unreadable. */
export class ExamplesUnreadableError extends ContractError {
  override readonly code = 'ERR_CONTRACT_EXAMPLES_UNREADABLE' as const
  constructor(options?: ErrorOptions) {
    super('the contract examples could not be read', options)
  }
}

/** Codes in declaration order; the README's Errors table is checked against this list. */
export const CONTRACT_ERROR_CODES: readonly ContractErrorCode[] = Object.freeze([
  'ERR_CONTRACT_UNKNOWN_SCHEMA',
  'ERR_CONTRACT_UNKNOWN_ERROR_CODE',
  'ERR_CONTRACT_SCHEMA_LOAD',
  'ERR_CONTRACT_EXAMPLES_UNREADABLE',
])
