// Everything here is public: the endpoint's error classes and their stable codes.
// Messages never carry a header value, a token, a session id or any byte of a body.

/** Every stable code the endpoint can report. Retired codes are never reused. */
export type EndpointErrorCode =
  | 'ERR_MCP_ENDPOINT_CONFIG'
  | 'ERR_MCP_ENDPOINT_TOO_LARGE'
  | 'ERR_MCP_ENDPOINT_BODY_TIMEOUT'
  | 'ERR_MCP_ENDPOINT_BODY_ABORTED'
  | 'ERR_MCP_ENDPOINT_BUSY'
  | 'ERR_MCP_ENDPOINT_SESSION_STORE'
  | 'ERR_MCP_ENDPOINT_TLS'

/** Base class of every error the endpoint throws or reports. Switch on `code`, never on the message. */
export class EndpointError extends Error {
  readonly code: EndpointErrorCode
  constructor(code: EndpointErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/** A bad option given to one of the endpoint's constructors (before anything listens). */
export class EndpointConfigError extends EndpointError {
  constructor(message: string) {
    super('ERR_MCP_ENDPOINT_CONFIG', message)
  }
}

/** The shared session store failed; the request is answered 503 and nothing is assumed about the session. */
export class SessionStoreError extends EndpointError {
  constructor(options?: { cause?: unknown }) {
    super('ERR_MCP_ENDPOINT_SESSION_STORE', 'the session store is unavailable', options)
  }
}

/**
 * A certificate and key that cannot serve TLS: unreadable, not PEM, or a key that does not match the certificate.
 * `which` names the part at fault; the message never quotes a byte of either.
 */
export class TlsCredentialsError extends EndpointError {
  readonly which: 'cert' | 'key' | 'pair'
  constructor(which: 'cert' | 'key' | 'pair', message: string, options?: { cause?: unknown }) {
    super('ERR_MCP_ENDPOINT_TLS', message, options)
    this.which = which
  }
}
