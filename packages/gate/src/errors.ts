// Everything here is public: the gate's error classes and their stable codes.
// Messages never carry a token, a claim value, a tool name or any other input.

/** Every stable code the gate can report. Retired codes are never reused. */
export type GateErrorCode =
  | 'ERR_GATE_TOKEN_MISSING'
  | 'ERR_GATE_TOKEN_INVALID'
  | 'ERR_GATE_TOKEN_EXPIRED'
  | 'ERR_GATE_CLAIM_MISSING'
  | 'ERR_GATE_ISSUER'
  | 'ERR_GATE_AUDIENCE'
  | 'ERR_GATE_AUDIENCE_LIST'
  | 'ERR_GATE_KEYS_UNAVAILABLE'
  | 'ERR_GATE_BUDGET_CONFIG'
  | 'ERR_GATE_BUDGET_STORE'
  | 'ERR_GATE_CONFIG'
  | 'ERR_GATE_QUEUE_FULL'

/** Base class of every error the gate throws. Switch on `code`, never on the message. */
export class GateError extends Error {
  readonly code: GateErrorCode
  constructor(code: GateErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/**
 * A bearer token was refused. `code` says why (for logs and tests); the HTTP caller only ever sees the one
 * 401 challenge, whatever the reason.
 */
export class TokenRefused extends GateError {
  /** The verifying library's error class name, when the refusal came from it (for logs only). */
  readonly libraryError: string | undefined
  constructor(code: GateErrorCode, message: string, libraryError?: string) {
    super(code, message)
    this.libraryError = libraryError
  }
}

/** The key source (a JWKS URL) could not be read; a server fault, so it is never reported as a caller's bad token. */
export class KeysUnavailable extends GateError {
  constructor(options?: { cause?: unknown }) {
    super('ERR_GATE_KEYS_UNAVAILABLE', 'the issuer keys could not be fetched', options)
  }
}

/** A budget was constructed with impossible parameters. */
export class BudgetConfigError extends GateError {
  constructor(message: string) {
    super('ERR_GATE_BUDGET_CONFIG', message)
  }
}

/** The budget store (e.g. Redis) failed; the call is not admitted and the fault is the server's. */
export class BudgetStoreError extends GateError {
  constructor(options?: { cause?: unknown }) {
    super('ERR_GATE_BUDGET_STORE', 'the budget store could not be reached', options)
  }
}

/** The gate was configured with something it cannot use (bad resource URL, bad host pattern, bad tool list). */
export class GateConfigError extends GateError {
  constructor(message: string) {
    super('ERR_GATE_CONFIG', message)
  }
}

/**
 * A caller already has as many calls waiting for the scheduler as it may; this one was refused without running.
 * The caller's own load, not the server's fault: the gate answers 429 with Retry-After.
 */
export class CallerQueueFull extends GateError {
  /** The per-caller bound on waiting calls that was reached. */
  readonly limit: number
  constructor(limit: number) {
    super('ERR_GATE_QUEUE_FULL', `this caller already has ${limit} calls waiting; retry once some are answered`)
    this.limit = limit
  }
}
