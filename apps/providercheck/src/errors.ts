/**
 * Everything providercheck throws: a base class plus subclasses with stable codes (never reused). CheckFailure,
 * NotApplicable and UnsuitableFixture are thrown by check bodies and end one check; the others end the command.
 */
export type ProvidercheckErrorCode =
  | 'ERR_PROVIDERCHECK_CONFIG'
  | 'ERR_PROVIDERCHECK_CHECK_FAILED'
  | 'ERR_PROVIDERCHECK_NOT_APPLICABLE'
  | 'ERR_PROVIDERCHECK_UNSUITABLE_FIXTURE'
  | 'ERR_PROVIDERCHECK_REPORT_SHAPE'

export abstract class ProvidercheckError extends Error {
  abstract readonly code: ProvidercheckErrorCode
  constructor(message: string) {
    super(message)
    this.name = new.target.name
  }
}

/** The kit was configured with something the platform client refuses (a reserved edge header, a bad token). */
export class KitConfigError extends ProvidercheckError {
  override readonly code = 'ERR_PROVIDERCHECK_CONFIG' as const
}

/** Thrown by a check body: the check fails with this stable failure code and one-line reason. */
export class CheckFailure extends ProvidercheckError {
  override readonly code = 'ERR_PROVIDERCHECK_CHECK_FAILED' as const
  constructor(
    readonly failureCode: string,
    reason: string,
  ) {
    super(reason)
  }
}

/** Thrown by a check body when the check does not apply to this provider (e.g. a capability not declared). */
export class NotApplicable extends ProvidercheckError {
  override readonly code = 'ERR_PROVIDERCHECK_NOT_APPLICABLE' as const
}

/**
 * Thrown by a check body when a fixture given on the command line is in a state the check cannot use (a paused
 * subscription as -subscription): the check is skipped as `unsuitable_fixture`, never blamed on the provider. The
 * message says what to pass instead.
 */
export class UnsuitableFixture extends ProvidercheckError {
  override readonly code = 'ERR_PROVIDERCHECK_UNSUITABLE_FIXTURE' as const
}

/** `providercheck report` was given JSON that is not a providercheck report (a field missing or of another type). */
export class ReportShapeError extends ProvidercheckError {
  override readonly code = 'ERR_PROVIDERCHECK_REPORT_SHAPE' as const
}
