// The client's public types and the protocol constants they name, shared by the client and its transports.
import type { RequestPhase } from './errors.js'

/** The protocol era a server speaks: the 2026-07-28 revision, or the session-based one before it. */
export type Era = '2026-07-28' | 'legacy'

export const MODERN_VERSION = '2026-07-28'
export const LEGACY_VERSION = '2025-11-25'
/** The contract's error envelope schema (structuredContent of an isError result). */
export const ERROR_ENVELOPE_REF = 'error.json'

/** The binding a provider serves: MCP tools, or the seed's REST routes (rest-binding.md). */
export type Transport = 'mcp' | 'rest'

/** The correlation identifiers a call carries in `_meta` (MCP) or the X-SupportRoute-* headers (REST). */
export interface CallContext {
  correlationId: string
  channel: string
  externalTicket?: string
}

/** How one request of an attempt is signed: correctly, with a broken signature, or with an old timestamp. */
export type SignatureMode = 'valid' | 'broken' | { staleSeconds: number }

/**
 * REST only: how the signature's key field and the Idempotency-Key header disagree (a conformance check's probe;
 * each must be refused 401): the header carries another key than the one signed, the key field is signed empty
 * (the MCP form) while the header is sent, or the header is removed after signing over the key.
 */
export type KeyFieldFault = 'header_differs' | 'signed_empty' | 'header_removed'

/** Knobs of a single attempt, used by conformance checks. */
export interface AttemptOptions {
  /** Chooses the signature per request; default every request valid. */
  signatureFor?: (phase: RequestPhase) => SignatureMode
  /** REST only (needs an idempotency_key in the arguments): breaks the key field's binding on purpose. */
  keyFieldFault?: KeyFieldFault
  /** Epoch ms bounding the attempt's requests (each request's timeout is cut to what is left). */
  deadline?: number
}

/**
 * One attempt's answer: the validated object, or the validated error envelope with its REST status. `T` is the
 * tool's result type (the contract's generated type, e.g. Transaction for sr_get_transaction) when the tool's name
 * is known at compile time; the object has passed the contract's runtime validation before it is typed so.
 */
export type ToolOutcome<T = unknown> =
  | { kind: 'result'; status: 200; value: T; era: Era | null; requestId: string; body?: Buffer }
  | {
      kind: 'error'
      /** Over MCP the seed's table status of the code; over REST the HTTP status as received. */
      status: number
      code: string
      retryable: boolean
      message: string
      /** The error envelope ({"error":{code,message,retryable}}), validated against error.json. */
      value: unknown
      /** The MCP era; null over REST. */
      era: Era | null
      requestId: string
      /** REST only: the received body, byte for byte (a replay is compared on these bytes). */
      body?: Buffer
      /** The answer's Retry-After in milliseconds, when it carried one (409 in_progress, 429, 503). */
      retryAfterMs?: number
    }

/** A call's answer after retries; 'verified' when retries ran out and sr_get_operation was asked. */
export type CallResult<T = unknown> =
  | (ToolOutcome<T> & { attempts: number })
  | {
      kind: 'verified'
      operation: unknown
      attempts: number
      /** The last attempt's failure: an ERR_PLATFORM_… code or a 5xx envelope code (internal_error, unavailable). */
      lastFailure: string
    }

/** One page of tools/list, read strictly (numbers may be fractional in schemas). */
export interface ToolPage {
  tools: unknown[]
  nextCursor: string | undefined
}

export interface ToolListing {
  era: Era
  pages: ToolPage[]
  /** true when the server offered more pages than maxPages (reading stopped at maxPages + 1). */
  truncated: boolean
}
