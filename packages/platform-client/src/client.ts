import { setTimeout as sleep } from 'node:timers/promises'
import { PROFILE_TOOLS, type ProfileToolName, type ToolResult } from '@tollgate/contract'
import { PlatformClientError, UnexpectedHttpStatus } from './errors.js'
import { Endpoint } from './internal/endpoint.js'
import { McpTransport } from './internal/mcp-transport.js'
import { type ResolvedOptions, resolveOptions } from './internal/options.js'
import { RestTransport } from './internal/rest-transport.js'
import type { ToolTransport } from './internal/tool-transport.js'
import type { AttemptOptions, CallContext, CallResult, Era, ToolListing, ToolOutcome, Transport } from './types.js'

/** How the platform reaches one provider. */
export interface PlatformClientOptions {
  /**
   * The provider's endpoint: over MCP the MCP URL (https://billing.example.com/mcp); over REST the base URL the
   * `/v1/…` routes hang from, which may carry a path prefix (https://billing.example.com/chargeless).
   */
  baseUrl: string
  /** 'mcp' (default) or 'rest'. */
  transport?: Transport
  /** The signing secret (srmps_… sandbox, srmp_… production); never logged. */
  secret: string
  /** Allow private/loopback addresses, any port, and plain http on loopback. Default false. */
  allowPrivate?: boolean
  /** Sent as `Authorization: Bearer …` on every request when set. */
  bearerToken?: string
  /** Extra headers sent on every request (an edge or WAF token), never overriding protocol headers. */
  edgeHeaders?: Record<string, string>
  /** 'auto' (default) tries server/discover and falls back to initialize on a legacy-era answer. */
  era?: 'auto' | Era
  /** Per HTTP request, default 30000. */
  timeoutMs?: number
  /** Largest accepted answer, default 1 MiB. */
  maxBodyBytes?: number
  /** Attempts of one call when the outcome counts as a 5xx, default 3. */
  maxAttempts?: number
  /** Pause before a retry, multiplied by the attempt number; default 200. */
  retryDelayMs?: number
  /**
   * The deadline of one callTool, from its start: its attempts and every wait between them; default 90000 (the
   * default maxAttempts × timeoutMs). No wait reaches past it, and each request's timeout is cut to what is left.
   */
  callTimeoutMs?: number
  /**
   * The longest Retry-After that callTool waits for (409 in_progress, 429, 503); default 10000. A longer one is not
   * waited for: the call ends with that answer at once (its retryAfterMs says when to come back).
   */
  maxRetryAfterMs?: number
  /** The signing clock, default the system clock. */
  now?: () => Date
  /** Where detected eras are cached per base URL; default a module-wide cache. */
  eraCache?: Map<string, Era>
  /**
   * Certificate authorities (PEM) trusted for an https base URL in place of Node's bundled ones — a private CA for
   * a provider's staging or test certificate. Default: the system's trust (plus NODE_EXTRA_CA_CERTS). The
   * platform itself trusts public CAs only.
   */
  ca?: string | readonly string[]
  /** Aborting it ends a wait between attempts at once (the call rejects with the signal's reason). */
  signal?: AbortSignal
}

/** The shortest wait on a Retry-After (a `Retry-After: 0` must not spin): also never below retryDelayMs. */
const MIN_RETRY_AFTER_WAIT_MS = 50

/**
 * Calls merchant-provider/v1 tools the way the platform does: over MCP one session per attempt, over REST one
 * request per attempt; signed requests, strict reading and contract validation of the answer. Throws TypeError
 * (wrong type, missing secret or base URL) or RangeError (a number out of range) naming the option.
 */
export class PlatformClient {
  readonly #options: ResolvedOptions
  readonly #transport: ToolTransport
  /** The MCP transport's own operations (discovery, tools/list); undefined for a REST client. */
  readonly #mcp: McpTransport | undefined

  constructor(options: PlatformClientOptions) {
    this.#options = resolveOptions(options)
    const endpoint = new Endpoint(this.#options)
    this.#mcp = this.#options.transport === 'mcp' ? new McpTransport(endpoint, this.#options) : undefined
    this.#transport = this.#mcp ?? new RestTransport(endpoint)
  }

  /** The binding this client speaks. */
  get transport(): Transport {
    return this.#transport.kind
  }

  /** The era this client uses for the base URL (detecting it with a discovery when not known yet). MCP only. */
  async era(): Promise<Era> {
    return this.#mcpOnly('era()').era()
  }

  /**
   * Opens and closes one session (server/discover, or initialize + initialized + DELETE) and returns the era it
   * used; detects and caches the era when it is not known. Throws PlatformClientError.
   */
  async discover(): Promise<Era> {
    return this.#mcpOnly('discover()').discover()
  }

  /**
   * Calls a profile tool: attempts until an answer that does not count as a 5xx (at most maxAttempts, the same
   * arguments and key each time); when they run out and the arguments carry an idempotency_key, asks
   * sr_get_operation. Throws the last PlatformClientError otherwise.
   */
  async callTool<N extends ProfileToolName>(
    name: N,
    args: Record<string, unknown>,
    context: CallContext,
  ): Promise<CallResult<ToolResult<N>>>
  async callTool(name: string, args: Record<string, unknown>, context: CallContext): Promise<CallResult>
  async callTool(name: string, args: Record<string, unknown>, context: CallContext): Promise<CallResult> {
    const deadline = Date.now() + this.#options.callTimeoutMs
    // The last failure: a thrown error or an error envelope (5xx-class, or one that asked to be retried later).
    let last: { error: PlatformClientError } | { outcome: ToolOutcome } | undefined
    let attempts = 0
    // Attempts that failed as a 5xx without a Retry-After: these count against maxAttempts.
    let failures = 0
    for (;;) {
      attempts += 1
      let hinted: number | undefined
      try {
        const outcome = await this.attempt(name, args, context, { deadline })
        hinted = retryLater(outcome)
        if (hinted === undefined && (outcome.kind !== 'error' || outcome.status < 500)) return { ...outcome, attempts }
        last = { outcome }
      } catch (error) {
        if (!(error instanceof PlatformClientError)) throw error
        hinted = retryLater(error)
        if (hinted === undefined && !error.retryable) throw error
        last = { error }
      }
      let wait: number
      if (hinted !== undefined) {
        // The answer said when to come back: waited for when it fits under the cap and before the deadline.
        wait = Math.max(hinted, this.#options.retryDelayMs, MIN_RETRY_AFTER_WAIT_MS)
        if (hinted > this.#options.maxRetryAfterMs) break
      } else {
        failures += 1
        if (failures >= this.#options.maxAttempts) break
        wait = this.#options.retryDelayMs * failures
      }
      if (Date.now() + wait >= deadline) break
      await sleep(wait, undefined, this.#options.signal === undefined ? {} : { signal: this.#options.signal })
    }
    // A refusal that asked to be retried later (409 in_progress, 429) is the answer when the wait does not fit.
    if ('outcome' in last && last.outcome.status < 500) return { ...last.outcome, attempts }
    if ('error' in last && !last.error.retryable) throw last.error
    const lastFailure = 'error' in last ? last.error.code : (last.outcome as { code: string }).code
    const key = args.idempotency_key
    if (typeof key === 'string' && name !== 'sr_get_operation') {
      try {
        const check = await this.attempt('sr_get_operation', { idempotency_key: key }, context)
        if (check.kind === 'result') return { kind: 'verified', operation: check.value, attempts, lastFailure }
      } catch {
        // The verification failing leaves the original failure as the answer.
      }
    }
    if ('error' in last) throw last.error
    return { ...last.outcome, attempts }
  }

  /**
   * One attempt. MCP: its own session, one tools/call, closed. REST: one signed request to the tool's route.
   * Throws PlatformClientError for any failure.
   */
  async attempt<N extends ProfileToolName>(
    name: N,
    args: Record<string, unknown>,
    context: CallContext,
    options?: AttemptOptions,
  ): Promise<ToolOutcome<ToolResult<N>>>
  async attempt(
    name: string,
    args: Record<string, unknown>,
    context: CallContext,
    options?: AttemptOptions,
  ): Promise<ToolOutcome>
  async attempt(
    name: string,
    args: Record<string, unknown>,
    context: CallContext,
    options: AttemptOptions = {},
  ): Promise<ToolOutcome> {
    const tool = PROFILE_TOOLS.find((t) => t.name === name)
    if (!tool) throw new TypeError('not a profile tool')
    return this.#transport.call({ name, outputRef: tool.outputRef, args, context, options })
  }

  /**
   * Lists tools in one session, following nextCursor; reads at most maxPages + 1 pages (then truncated is
   * true). deadline (epoch ms) bounds the whole listing: passing it throws RequestTimedOut.
   */
  async listTools(options: { maxPages: number; deadline?: number }): Promise<ToolListing> {
    return this.#mcpOnly('listTools()').listTools(options)
  }

  // Discovery and tools/list exist only over MCP: asking a REST client for them is caller misuse.
  #mcpOnly(what: string): McpTransport {
    if (this.#mcp === undefined) throw new TypeError(`${what} is MCP only (transport is rest)`)
    return this.#mcp
  }
}

/**
 * How long an answer asked the platform to wait before the same call again, when it is one the platform retries on
 * its word: a retryable 409 in_progress, 429 or 503 envelope, or an HTTP 429/503 refusal, carrying Retry-After.
 * undefined for everything else — a refusal that is not retryable is never retried, whatever header it carries.
 */
function retryLater(answer: ToolOutcome | PlatformClientError): number | undefined {
  if (answer instanceof UnexpectedHttpStatus)
    return answer.status === 429 || answer.status === 503 ? answer.retryAfterMs : undefined
  if (answer instanceof PlatformClientError || answer.kind !== 'error' || !answer.retryable) return undefined
  const asked =
    (answer.status === 409 && answer.code === 'in_progress') || answer.status === 429 || answer.status === 503
  return asked ? answer.retryAfterMs : undefined
}
