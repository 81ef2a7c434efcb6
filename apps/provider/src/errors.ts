// Local errors of @tollgate/provider: stable codes, never an input value or a secret in the message.
import { outageOf, type StoreHealth, type StoreOutage } from './store/outage.js'

export type ProviderErrorCode =
  | 'ERR_PROVIDER_STORE'
  | 'ERR_PROVIDER_NO_SECRET'
  | 'ERR_PROVIDER_DESCRIBE_INVALID'
  | 'ERR_PROVIDER_PORT_INCOMPLETE'
  | 'ERR_PROVIDER_DEMO_IN_PRODUCTION'
  | 'ERR_PROVIDER_NO_BILLING'
  | SecretsErrorCode

/** Why a list of signing secrets (setSecrets, readSecretsFile) was refused. */
export type SecretsErrorCode =
  | 'ERR_PROVIDER_SECRETS_EMPTY'
  | 'ERR_PROVIDER_SECRETS_TOO_MANY'
  | 'ERR_PROVIDER_SECRET_MALFORMED'
  | 'ERR_PROVIDER_SECRETS_ENVIRONMENT'
  | 'ERR_PROVIDER_SECRETS_FILE_UNREADABLE'

/** Every local error code (pinned against the README's table by a test). */
export const PROVIDER_ERROR_CODES: readonly ProviderErrorCode[] = [
  'ERR_PROVIDER_STORE',
  'ERR_PROVIDER_NO_SECRET',
  'ERR_PROVIDER_DESCRIBE_INVALID',
  'ERR_PROVIDER_PORT_INCOMPLETE',
  'ERR_PROVIDER_DEMO_IN_PRODUCTION',
  'ERR_PROVIDER_NO_BILLING',
  'ERR_PROVIDER_SECRETS_EMPTY',
  'ERR_PROVIDER_SECRETS_TOO_MANY',
  'ERR_PROVIDER_SECRET_MALFORMED',
  'ERR_PROVIDER_SECRETS_ENVIRONMENT',
  'ERR_PROVIDER_SECRETS_FILE_UNREADABLE',
]

/** Base class of every error this package throws on purpose. */
export class ProviderError extends Error {
  readonly code: ProviderErrorCode
  constructor(code: ProviderErrorCode, message: string) {
    super(message)
    this.name = 'ProviderError'
    this.code = code
  }
}

/**
 * A store operation failed in a way the caller cannot fix (database error, lost claim). `outage` is set when the cause
 * is the database being unreachable, shut down, frozen past the timeouts, out of disk or too contended (answered
 * `unavailable` with Retry-After); otherwise it is a fault of this program (`internal_error`).
 */
export class StoreError extends ProviderError {
  readonly outage: StoreOutage | undefined
  /** The failing store's up/down state, for the once-per-outage log line (not enumerable: never serialized). */
  declare readonly health: StoreHealth | undefined
  constructor(message: string, options?: { cause?: unknown; health?: StoreHealth }) {
    super('ERR_PROVIDER_STORE', message)
    if (options?.cause !== undefined) this.cause = options.cause
    this.outage = options?.cause === undefined ? undefined : outageOf(options.cause)
    Object.defineProperty(this, 'health', { value: options?.health, enumerable: false })
  }

  /** Marks the store down when this is an outage (since: the health's epoch when the failed call started). */
  reported(since: number): this {
    if (this.outage !== undefined) this.health?.failed(this.outage, since)
    return this
  }
}

/** No signing secret was configured; the server refuses to start unsigned. */
export class NoSecretError extends ProviderError {
  constructor() {
    super(
      'ERR_PROVIDER_NO_SECRET',
      'no signing secret: set SIGNING_SECRET=srmps_<random> (sandbox) or srmp_<random> (production)',
    )
  }
}

/**
 * The billing port's describe() answered an object describe.json refuses; startProvider stops before listening.
 * `faults` are the schema paths (`describe.capabilities.outcome_callbacks: required`), never values.
 */
export class DescribeInvalidError extends ProviderError {
  readonly faults: readonly string[]
  constructor(faults: readonly string[]) {
    super('ERR_PROVIDER_DESCRIBE_INVALID', `BillingPort.describe() answered an invalid describe: ${faults.join('; ')}`)
    this.name = 'DescribeInvalidError'
    this.faults = faults
  }
}

/**
 * The billing port lacks a method the contract needs, or one a capability its describe() declares needs
 * (`payment_attempts` needs listPaymentAttempts); startProvider stops before listening. `missing` names the methods.
 */
export class PortIncompleteError extends ProviderError {
  readonly missing: readonly string[]
  constructor(problems: readonly { method: string; capability?: string }[]) {
    const described = problems.map((p) =>
      p.capability === undefined
        ? `BillingPort.${p.method}() is missing`
        : `describe() declares capabilities.${p.capability} but BillingPort.${p.method}() is missing`,
    )
    super('ERR_PROVIDER_PORT_INCOMPLETE', described.join('; '))
    this.name = 'PortIncompleteError'
    this.missing = problems.map((p) => p.method)
  }
}

/**
 * startProvider in production (an srmp_ secret, or environment 'production') without a `billing` port of the
 * merchant's own (none, `demoLedger`, or a DemoLedger instance as `billing`): the demo ledger's invented customers and
 * refunds must never answer the platform's production traffic.
 */
export class DemoInProductionError extends ProviderError {
  constructor() {
    super(
      'ERR_PROVIDER_DEMO_IN_PRODUCTION',
      'production (an srmp_ secret) needs your billing system: pass `billing`, your BillingPort; the demo ledger runs in the sandbox (srmps_ secrets) only',
    )
    this.name = 'DemoInProductionError'
  }
}

/**
 * startProvider in the sandbox with neither `billing` nor `demoLedger`: the demo ledger is never a silent default, so a
 * server meant for the merchant's billing cannot start on invented data by leaving an option out.
 */
export class NoBillingError extends ProviderError {
  constructor() {
    super(
      'ERR_PROVIDER_NO_BILLING',
      'no billing system: pass `billing`, your BillingPort, or `demoLedger: {}` for the demo data (sandbox srmps_ secrets only)',
    )
    this.name = 'NoBillingError'
  }
}

/**
 * A list of signing secrets that cannot be used (setSecrets, readSecretsFile): none, more than two, one without the
 * srmps_/srmp_ prefix (or with spaces or control characters inside), a switch between sandbox and production, or a
 * secrets file that cannot be read. `line` is the file's line number for a malformed secret. Never carries a value.
 */
export class SecretsError extends ProviderError {
  declare readonly code: SecretsErrorCode
  readonly line: number | undefined
  constructor(code: SecretsErrorCode, message: string, options?: { line?: number; cause?: unknown }) {
    super(code, message)
    this.name = 'SecretsError'
    this.line = options?.line
    if (options?.cause !== undefined) this.cause = options.cause
  }
}
