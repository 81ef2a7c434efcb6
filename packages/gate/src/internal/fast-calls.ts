// The gate's fast path for a plain tools/call, both eras. It runs behind the door (@tollgate/mcp-endpoint): token
// admitted, body read once and parsed once, strictly. It takes only the envelope the SDK would answer with a plain
// result (mcp-endpoint's modernToolCall / legacyToolCall: anything else, including every request the SDK would
// refuse, is left untouched to the SDK) and then runs the very same steps as the SDK path, on one long-lived
// GateServer: the budget charge and the concealment (`gate`), the handler's own work (`serveGranted`), the call
// report (`report`), in the scheduler's turn. What it skips is the per-request SDK server, its transport and the
// web Response, so the result is serialised once; and a settled answer (see GatedToolAnswer.settled) is not
// serialised at all after its first reply: its bytes are kept (bounded, least recently used first) and only the
// JSON-RPC id is spliced in.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AuthInfo, JSONRPCRequest, ServerContext } from '@modelcontextprotocol/server'
import {
  type AdmittedMessage,
  type Caller,
  legacyToolCall,
  modernResultTail,
  openResultJson,
  type PlainToolCall,
  writeToolResult,
} from '@tollgate/mcp-endpoint'
import { BUDGET_UNAVAILABLE_ERROR, BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS, type GatedToolAnswer } from '../tools.js'
import { type GateServer, scopeOf } from './gate-server.js'

/** Default cap of the settled answers' kept bytes: 32 MiB (the whole USD history is about 0.37 MB). */
export const SETTLED_ANSWER_BYTES = 32 * 1024 * 1024

/**
 * Serialised results of settled answers, keyed by the answer object itself, least recently used out first once
 * their bytes pass the cap. A result larger than the cap is served but not kept.
 */
export class SettledAnswerBytes {
  readonly #entries = new Map<GatedToolAnswer, Buffer>()
  #bytes = 0
  constructor(readonly capBytes: number) {}

  get bytes(): number {
    return this.#bytes
  }
  get size(): number {
    return this.#entries.size
  }

  get(answer: GatedToolAnswer): Buffer | undefined {
    const hit = this.#entries.get(answer)
    if (hit !== undefined) {
      this.#entries.delete(answer)
      this.#entries.set(answer, hit)
    }
    return hit
  }

  set(answer: GatedToolAnswer, bytes: Buffer): void {
    if (bytes.length > this.capBytes) return
    this.#entries.set(answer, bytes)
    this.#bytes += bytes.length
    for (const [oldest, kept] of this.#entries) {
      if (this.#bytes <= this.capBytes) break
      this.#entries.delete(oldest)
      this.#bytes -= kept.length
    }
  }
}

/** The fast path's two legs and its counters (diagnostics that tests and benches read). */
export interface FastCalls {
  modern(message: AdmittedMessage, res: ServerResponse): Promise<boolean>
  legacy(message: unknown, req: IncomingMessage, res: ServerResponse, who: Caller): Promise<boolean>
  /** tools/call requests answered here, both eras. */
  readonly answered: number
  /** Of those, replies whose result was kept bytes of a settled answer (not serialised for this call). */
  readonly fromSettledBytes: number
  readonly settled: SettledAnswerBytes
}

export function createFastCalls(options: {
  /** One server for every fast call: only its gate, handler and report are used, never a transport. */
  server: GateServer
  serverInfo: { name: string; version: string }
  /**
   * Runs a caller's tool call in its turn (the gate's scheduler), answering a full queue itself (429); absent
   * without a scheduler.
   */
  inTurn?: (caller: string, res: ServerResponse, message: unknown, work: () => Promise<void>) => Promise<void>
  settledAnswerBytes: number
}): FastCalls {
  const { server, inTurn } = options
  const settled = new SettledAnswerBytes(options.settledAnswerBytes)
  const modernTail = modernResultTail(options.serverInfo)
  let answered = 0
  let fromSettledBytes = 0

  async function serve(call: PlainToolCall, authInfo: AuthInfo | undefined, res: ServerResponse, tail: string) {
    // The one field the gate's steps read from the SDK's context (callerOf): the AuthInfo the audience check made.
    const ctx = { http: authInfo === undefined ? undefined : { authInfo } } as unknown as ServerContext
    const request = call.request as unknown as JSONRPCRequest
    const gate = server.gate as NonNullable<GateServer['gate']>
    const serveGranted = server.serveGranted as NonNullable<GateServer['serveGranted']>
    const startedMs = performance.now()
    let served: Awaited<ReturnType<typeof serveGranted>>
    try {
      const refused = await gate(request, ctx, scopeOf(res))
      served = refused === undefined ? await serveGranted(request, ctx) : { result: refused }
    } catch (error) {
      // The budget store could not charge (the gate reported it): 503 with Retry-After and the fixed JSON-RPC error,
      // exactly what the SDK path answers.
      if ((error as { code?: unknown }).code !== BUDGET_UNAVAILABLE_ERROR.code) throw error
      answered++
      answerBudgetUnavailable(res, call.id)
      return
    }
    server.report?.(request, ctx, served.result, startedMs)
    const answer = served.answer
    let bytes: Buffer | undefined
    if (answer?.ok === true && answer.settled === true) {
      bytes = settled.get(answer)
      if (bytes !== undefined) fromSettledBytes++
      else {
        bytes = openResultJson(served.result)
        settled.set(answer, bytes)
      }
    }
    answered++
    writeToolResult(res, call.id, bytes ?? openResultJson(served.result), tail)
  }

  return {
    async modern({ message, plainCall: call, caller }, res) {
      if (call === undefined) return false
      // The same turn-taking as the SDK leg (createGate wraps that one): a tool call waits for its caller's turn.
      const sub = caller.authInfo?.clientId
      if (inTurn !== undefined && sub !== undefined)
        await inTurn(sub, res, message, () => serve(call, caller.authInfo, res, modernTail))
      else await serve(call, caller.authInfo, res, modernTail)
      return true
    },
    // Already in the scheduler's turn: createGate schedules the whole legacy leg's tool calls.
    async legacy(message, req, res, who) {
      const call = legacyToolCall(message, req.headers)
      if (call === undefined) return false
      await serve(call, who.authInfo, res, '')
      return true
    },
    get answered() {
      return answered
    },
    get fromSettledBytes() {
      return fromSettledBytes
    },
    settled,
  }
}

/** HTTP 503, Retry-After and the JSON-RPC error of a call the budget store could not charge. */
export function answerBudgetUnavailable(res: ServerResponse, id: unknown): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id, error: BUDGET_UNAVAILABLE_ERROR })
  res
    .writeHead(503, {
      'content-type': 'application/json',
      'retry-after': String(BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS),
      'content-length': Buffer.byteLength(body),
    })
    .end(body)
}
