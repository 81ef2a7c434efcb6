/** Every local failure of @tollgate/signing carries one of these stable codes. */
export type SigningErrorCode = 'ERR_SIGNING_NO_SECRET' | 'ERR_SIGNING_SECRET_FORMAT' | 'ERR_SIGNING_TOO_MANY_SECRETS'

/** Base class: misuse of the signing API by its caller (never thrown for a bad incoming request). */
export class SigningError extends Error {
  readonly code: SigningErrorCode
  constructor(code: SigningErrorCode, message: string) {
    super(message)
    this.name = 'SigningError'
    this.code = code
  }
}
