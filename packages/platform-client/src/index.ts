// @tollgate/platform-client — calls merchant-provider/v1 providers (MCP or REST) the way the platform does.
// Everything exported here is public API; helpers live in src/internal/.

export { isLoopbackAddress, isPublicAddress } from './address.js'
export { type BaseUrlRules, checkBaseUrl } from './base-url.js'
export { PlatformClient, type PlatformClientOptions } from './client.js'
export {
  BaseUrlRejected,
  BodyTooLarge,
  DiscoveryFailed,
  DuplicateKeyInBody,
  InvalidResult,
  JsonRpcErrorAnswer,
  MalformedBody,
  NetworkFailure,
  NoAnswer,
  NonIntegerNumber,
  PlatformClientError,
  type PlatformClientErrorCode,
  PrivateAddressRejected,
  RedirectRefused,
  type RequestPhase,
  RequestTimedOut,
  ResultNotComplete,
  ToolListMalformed,
  UnexpectedHttpStatus,
} from './errors.js'
export { STRICT_LIMITS, TOOL_LIST_MAX_DEPTH } from './limits.js'
export {
  type AttemptOptions,
  type CallContext,
  type CallResult,
  ERROR_ENVELOPE_REF,
  type Era,
  type KeyFieldFault,
  LEGACY_VERSION,
  MODERN_VERSION,
  type SignatureMode,
  type ToolListing,
  type ToolOutcome,
  type ToolPage,
  type Transport,
} from './types.js'
