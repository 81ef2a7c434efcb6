// Everything here is public: the package's error classes and their stable codes. Messages never carry a request
// value, a connection string or a dependency's own error text.

/** Every stable code the package can report. Retired codes are never reused. */
export type OperabilityErrorCode = 'ERR_OPERABILITY_CHECK_TIMEOUT'

/** Base class of every error the package throws or reports. Switch on `code`, never on the message. */
export class OperabilityError extends Error {
  readonly code: OperabilityErrorCode
  constructor(code: OperabilityErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/** A readiness check did not settle within its timeout: the dependency counts as not ready. */
export class CheckTimeoutError extends OperabilityError {
  /** The check's name (given by the server, never a value from a request). */
  readonly check: string
  constructor(check: string, timeoutMs: number) {
    super('ERR_OPERABILITY_CHECK_TIMEOUT', `readiness check ${check} did not answer within ${timeoutMs} ms`)
    this.check = check
  }
}
