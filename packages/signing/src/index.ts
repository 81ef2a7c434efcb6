// The public surface of @tollgate/signing: everything exported here is supported API.

// Local misuse errors with stable codes.
export { SigningError, type SigningErrorCode } from './errors.js'
// Signing a request (the platform's side, and tests).
export { SIGNATURE_HEADER, type SignedRequest, signatureFor, signHeaders, TIMESTAMP_HEADER } from './sign.js'
// Verifying one (the provider's side), and the fixed 401 body.
export {
  CREDENTIALS_REJECTED_BODY,
  SignatureVerifier,
  type SigningEnvironment,
  secretEnvironment,
  type VerifierOptions,
  type VerifyResult,
} from './verify.js'
