// The one declared hook around tool calls, on both eras (Fastify declares its hooks the same way): a server that must
// run something around every tools/call (a turn in a fair queue, a charge whose failure is an outage) says so here,
// instead of wrapping the endpoint's or the sessions' methods or the response's.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { NodeServerResponseLike } from '@modelcontextprotocol/node'
import type { Caller } from './legacy-sessions.js'
import type { PlainToolCall } from './tool-call.js'

/** The head an SDK answer goes out with instead of its `200` (see {@link ToolCallExchange.replaceSuccessHead}). */
export interface AnswerHead {
  status: number
  /** Added to the SDK's own headers. */
  headers: Readonly<Record<string, string>>
}

/** One POST whose message holds a tools/call (alone or in a batch), admitted and parsed once, as the hook sees it. */
export interface ToolCallExchange {
  readonly era: 'modern' | 'legacy'
  readonly req: IncomingMessage
  readonly res: ServerResponse
  /** The one parse of the body. */
  readonly message: unknown
  readonly caller: Caller
  /**
   * Asks that the SDK's answer to this exchange, if it is a `200`, go out with `head` instead (e.g. a 503 with
   * Retry-After when a dependency failed while the SDK answered a JSON-RPC error). Called while the exchange is
   * served, before the SDK writes its answer; answers the hook or a fast path write themselves are untouched.
   */
  replaceSuccessHead(head: AnswerHead): void
  /** The head asked for with {@link replaceSuccessHead}, if any. */
  readonly successHead: AnswerHead | undefined
}

/**
 * Runs around every POSTed message holding a tools/call, on both eras, before anything else serves it (for the
 * 2025 era, before its session is checked). `serve` serves the exchange (a fast path, else the SDK); a hook may
 * instead answer `exchange.res` itself and never call it. Every other message is served without the hook.
 */
export type AroundToolCall = (
  exchange: ToolCallExchange,
  serve: (exchange: ToolCallExchange) => Promise<void>,
) => Promise<void>

/** true when the message is a tools/call, or a batch holding one. */
export function holdsToolCall(message: unknown): boolean {
  return Array.isArray(message) ? message.some(isToolCall) : isToolCall(message)
}

const isToolCall = (m: unknown) => (m as { method?: unknown } | null)?.method === 'tools/call'

/** The exchange as the endpoint keeps it: for the modern era also what a fast path is given (AdmittedMessage). */
export class Exchange implements ToolCallExchange {
  successHead: AnswerHead | undefined = undefined
  constructor(
    readonly era: 'modern' | 'legacy',
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly message: unknown,
    readonly caller: Caller,
    readonly raw: Buffer,
    readonly plainCall: PlainToolCall | undefined,
  ) {}

  replaceSuccessHead(head: AnswerHead): void {
    this.successHead = head
  }

  /**
   * What the SDK's node adapter writes this exchange's answer to: the response itself, its success head replaced
   * when one was asked for (headers set first, as the SDK's own would be with setHeader).
   */
  sdkResponse(): NodeServerResponseLike {
    const res = this.res
    return {
      writeHead: (status, headers) => res.writeHead(this.#status(status), headers),
      write: (chunk) => res.write(chunk),
      end: (chunk) => (chunk === undefined ? res.end() : res.end(chunk)),
      on: (event, listener) => res.on(event, listener),
      get destroyed() {
        return res.destroyed
      },
    }
  }

  /** The status to write instead of `status`, with the replacement's headers set on the response. */
  #status(status: number): number {
    const head = this.successHead
    if (head === undefined || status !== 200) return status
    for (const [name, value] of Object.entries(head.headers)) this.res.setHeader(name, value)
    return head.status
  }

  /** The legacy leg's web answer with its success head replaced (headers set on the response first, as above). */
  replaceHead(response: Response): Response {
    const status = this.#status(response.status)
    return status === response.status
      ? response
      : new Response(response.body, { status, statusText: '', headers: response.headers })
  }
}
