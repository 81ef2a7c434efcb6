/** Every error this package throws: a base class plus subclasses with stable codes (never reused). */
export type PlatformClientErrorCode =
  | 'ERR_PLATFORM_BASE_URL'
  | 'ERR_PLATFORM_PRIVATE_ADDRESS'
  | 'ERR_PLATFORM_REDIRECT'
  | 'ERR_PLATFORM_NETWORK'
  | 'ERR_PLATFORM_TIMEOUT'
  | 'ERR_PLATFORM_HTTP_STATUS'
  | 'ERR_PLATFORM_BODY_TOO_LARGE'
  | 'ERR_PLATFORM_MALFORMED_BODY'
  | 'ERR_PLATFORM_DUPLICATE_KEY'
  | 'ERR_PLATFORM_NOT_INTEGER'
  | 'ERR_PLATFORM_JSON_RPC_ERROR'
  | 'ERR_PLATFORM_NO_ANSWER'
  | 'ERR_PLATFORM_RESULT_TYPE'
  | 'ERR_PLATFORM_INVALID_RESULT'
  | 'ERR_PLATFORM_DISCOVERY'
  | 'ERR_PLATFORM_TOOL_LIST'

/** Base class: `code` is the stable identity; `retryable` says whether the platform counts it as a 5xx. */
export abstract class PlatformClientError extends Error {
  abstract readonly code: PlatformClientErrorCode
  /** true when the failure counts as a 5xx: the same call is retried with the same key, then verified. */
  readonly retryable: boolean
  constructor(message: string, retryable: boolean, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.retryable = retryable
  }
}

/** The base URL breaks the network rules (https on 443, no credentials, no fragment). */
export class BaseUrlRejected extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_BASE_URL' as const
  constructor(reason: string) {
    super(`base URL rejected: ${reason}`, false)
  }
}

/** The host resolved to a private, loopback, link-local or otherwise non-public address. */
export class PrivateAddressRejected extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_PRIVATE_ADDRESS' as const
  constructor() {
    super('the base URL resolves to a non-public address (allowPrivate is off)', false)
  }
}

/** The server answered with a redirect; the platform never follows one. */
export class RedirectRefused extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_REDIRECT' as const
  constructor(readonly status: number) {
    super(`the server answered ${status} (a redirect); redirects are not followed`, false)
  }
}

/** Connecting, sending or receiving failed below HTTP. */
export class NetworkFailure extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_NETWORK' as const
  constructor(detail: string, options?: { cause?: unknown }) {
    super(`network failure: ${detail}`, true, options)
  }
}

/** The request did not complete within its time limit. */
export class RequestTimedOut extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_TIMEOUT' as const
  constructor(readonly timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`, true)
  }
}

/** An HTTP status the exchange does not accept at that step (401 on a rejected signature, 5xx, …). */
export class UnexpectedHttpStatus extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_HTTP_STATUS' as const
  /** The received body, kept so a caller can judge an error envelope (it never holds our secrets). */
  readonly body: Buffer
  /** The answer's Retry-After in milliseconds, when it carried a readable one. */
  readonly retryAfterMs: number | undefined
  constructor(
    readonly status: number,
    readonly phase: RequestPhase,
    body: Buffer,
    retryAfterMs?: number,
  ) {
    super(`${phase} answered HTTP ${status}`, status >= 500)
    this.body = body
    this.retryAfterMs = retryAfterMs
  }
}

/** The answer is larger than maxBodyBytes. */
export class BodyTooLarge extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_BODY_TOO_LARGE' as const
  constructor(readonly maxBytes: number) {
    super(`the answer exceeds ${maxBytes} bytes`, false)
  }
}

/** The answer is not strict JSON (syntax, encoding, depth, …) or not a JSON-RPC message. */
export class MalformedBody extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_MALFORMED_BODY' as const
  /** What is wrong, e.g. `syntax`, `too_deep`, `not a JSON-RPC message` (never the received bytes). */
  readonly reason: string
  constructor(
    reason: string,
    readonly offset?: number,
  ) {
    super(`the answer is not acceptable JSON: ${reason}`, false)
    this.reason = reason
  }
}

/** The answer repeats a key inside one object (read from the received bytes). */
export class DuplicateKeyInBody extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_DUPLICATE_KEY' as const
  constructor(readonly offset?: number) {
    super(`the answer repeats a key in one object${offset === undefined ? '' : ` (byte ${offset})`}`, false)
  }
}

/** structuredContent holds a number written with a fraction or exponent (2000.0) or beyond ±(2^53-1). */
export class NonIntegerNumber extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_NOT_INTEGER' as const
  constructor(reason: string) {
    super(`structuredContent holds a number that is not a plain safe integer (${reason})`, false)
  }
}

/** The server answered the request with a JSON-RPC error; the platform counts it as a 5xx. */
export class JsonRpcErrorAnswer extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_JSON_RPC_ERROR' as const
  constructor(
    readonly rpcCode: number,
    readonly phase: RequestPhase,
  ) {
    super(`${phase} answered JSON-RPC error ${rpcCode}`, true)
  }
}

/** A stream (or an empty body) ended without the answer to our request; counts as a 5xx. */
export class NoAnswer extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_NO_ANSWER' as const
  constructor(readonly phase: RequestPhase) {
    super(`${phase}: the response ended without an answer`, true)
  }
}

/** A result whose resultType is not "complete" is not a final answer: the call fails. */
export class ResultNotComplete extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_RESULT_TYPE' as const
  constructor() {
    super('the result is not final (resultType is not "complete")', false)
  }
}

/** structuredContent (or the error envelope) does not match the contract schema. */
export class InvalidResult extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_INVALID_RESULT' as const
  constructor(readonly detail: string) {
    super(`the result does not match the contract: ${detail}`, false)
  }
}

/** Neither server/discover nor initialize produced a usable answer. */
export class DiscoveryFailed extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_DISCOVERY' as const
  constructor(detail: string) {
    super(`discovery failed: ${detail}`, false)
  }
}

/** tools/list answered something that is not a page of tools. */
export class ToolListMalformed extends PlatformClientError {
  override readonly code = 'ERR_PLATFORM_TOOL_LIST' as const
  constructor(detail: string) {
    super(`tools/list: ${detail}`, false)
  }
}

/** Which HTTP request of an attempt an error belongs to (over REST an attempt is one request). */
export type RequestPhase =
  | 'discover'
  | 'initialize'
  | 'initialized'
  | 'tools/call'
  | 'tools/list'
  | 'delete'
  /** The one request of a REST attempt. */
  | 'rest'
