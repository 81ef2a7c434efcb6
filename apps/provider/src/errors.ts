// Local errors of @tollgate/provider: stable codes, never an input value or a secret in the message.

export type ProviderErrorCode = 'ERR_PROVIDER_STORE' | 'ERR_PROVIDER_NO_SECRET'

/** Every local error code (pinned against the README's table by a test). */
export const PROVIDER_ERROR_CODES: readonly ProviderErrorCode[] = ['ERR_PROVIDER_STORE', 'ERR_PROVIDER_NO_SECRET']

/** Base class of every error this package throws on purpose. */
export class ProviderError extends Error {
  readonly code: ProviderErrorCode
  constructor(code: ProviderErrorCode, message: string) {
    super(message)
    this.name = 'ProviderError'
    this.code = code
  }
}

/** A store operation failed in a way the caller cannot fix (database error, lost claim). */
export class StoreError extends ProviderError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_PROVIDER_STORE', message)
    if (options?.cause !== undefined) this.cause = options.cause
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
