// Records what a check sent and what came back, at the level of the platform client's calls, so a failing
// check's report entry can show both. Excerpts are shortened and scrubbed of every secret the kit holds.
import { type PlatformClient, PlatformClientError, UnexpectedHttpStatus } from '@tollgate/platform-client'

/** One call of a check: what the kit sent and what came back, each one shortened line of text. */
export interface Exchange {
  sent: string
  received: string
}

/** Longest excerpt kept of one side of an exchange, in characters. */
export const EXCERPT_MAX_CHARS = 600
/** Most exchanges kept per check (a search check makes several calls; the first ones say what went wrong). */
export const EXCHANGES_MAX = 8

const RECORDED = new Set(['discover', 'listTools', 'callTool', 'attempt'])

export class ExchangeRecorder {
  #exchanges: Exchange[] = []
  #omitted = 0
  readonly #secrets: string[]

  /** secrets: every value that must never appear in an excerpt (signing secret, bearer token, edge header values). */
  constructor(secrets: readonly string[]) {
    // Longest first, so a secret containing another is scrubbed whole.
    this.#secrets = secrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)
  }

  /** A client that behaves exactly like `client` and records each recorded call's request and outcome. */
  wrap(client: PlatformClient): PlatformClient {
    return new Proxy(client, {
      get: (target, property) => {
        // The client itself as receiver: its getters (transport) read private fields a Proxy does not have.
        const value: unknown = Reflect.get(target, property, target)
        if (typeof value !== 'function') return value
        if (typeof property !== 'string' || !RECORDED.has(property)) return value.bind(target)
        return async (...args: unknown[]) => {
          const sent = this.#scrub(describeCall(property, args, target.transport))
          try {
            const answer: unknown = await Reflect.apply(value, target, args)
            this.#push({ sent, received: this.#scrub(describeAnswer(property, answer)) })
            return answer
          } catch (error) {
            this.#push({ sent, received: this.#scrub(describeError(error)) })
            throw error
          }
        }
      },
    })
  }

  /** The exchanges since the last take (then forgets them). */
  take(): Exchange[] {
    const taken = this.#exchanges
    if (this.#omitted > 0) taken.push({ sent: `(${this.#omitted} more call(s) not shown)`, received: '' })
    this.#exchanges = []
    this.#omitted = 0
    return taken
  }

  #push(exchange: Exchange): void {
    if (this.#exchanges.length < EXCHANGES_MAX) this.#exchanges.push(exchange)
    else this.#omitted += 1
  }

  #scrub(text: string): string {
    let clean = text
    for (const secret of this.#secrets) clean = clean.split(secret).join('[redacted]')
    return shorten(clean)
  }
}

/** Cuts text to EXCERPT_MAX_CHARS, saying how much was left out. */
export function shorten(text: string): string {
  if (text.length <= EXCERPT_MAX_CHARS) return text
  return `${text.slice(0, EXCERPT_MAX_CHARS)}… (${text.length - EXCERPT_MAX_CHARS} more characters)`
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return '(not serializable)'
  }
}

function describeCall(method: string, args: unknown[], transport: 'mcp' | 'rest'): string {
  if (method === 'discover') return 'handshake: server/discover (2026-07-28) or initialize (older eras)'
  if (method === 'listTools') return `tools/list (up to ${json((args[0] as { maxPages?: unknown })?.maxPages)} pages)`
  // Over REST the tool names the route the client maps it to; the arguments are the tool's, as over MCP.
  const call = `${transport === 'rest' ? 'REST call of' : 'tools/call'} ${String(args[0])} ${json(args[1])}`
  if (method === 'attempt' && (args[3] as { signatureFor?: unknown } | undefined)?.signatureFor !== undefined)
    return `${call} (one attempt, signatures altered on purpose)`
  return call
}

function describeAnswer(method: string, answer: unknown): string {
  if (method === 'discover') return `era ${String(answer)}`
  if (method === 'listTools') {
    const listing = answer as { pages: { tools: unknown[] }[]; truncated: boolean }
    const names = listing.pages.flatMap((p) => p.tools.map((t) => (t as { name?: unknown })?.name))
    return `${listing.pages.length} page(s)${listing.truncated ? ' (more were offered)' : ''}, tools ${json(names)}`
  }
  const outcome = answer as { kind: string } & Record<string, unknown>
  if (outcome.kind === 'result') return `result ${json(outcome.value)}`
  if (outcome.kind === 'error') {
    const retryable = outcome.retryable === true ? ', retryable' : ''
    return `error ${String(outcome.code)} (${String(outcome.status)}${retryable}) ${json(outcome.value)}`
  }
  if (outcome.kind === 'verified') {
    return `no answer after ${String(outcome.attempts)} attempt(s) (${String(outcome.lastFailure)}); sr_get_operation said ${json(outcome.operation)}`
  }
  return json(answer)
}

function describeError(error: unknown): string {
  if (error instanceof UnexpectedHttpStatus) {
    return `${error.code}: HTTP ${error.status} to ${error.phase}, body ${json(error.body.toString('utf8'))}`
  }
  if (error instanceof PlatformClientError) return `${error.code}: ${error.message}`
  return `thrown ${error instanceof Error ? error.name : 'value'}`
}
