// The gate's fast path for a plain tools/call, both eras. It runs behind the door (@tollgate/mcp-endpoint): token
// admitted, body read once and parsed once, strictly, and the caller's turn already taken (the gate's aroundToolCall).
// It takes only the envelope the SDK would answer with a plain result (mcp-endpoint's modernToolCall /
// legacyToolCall: anything else, including every request the SDK would refuse, is left untouched to the SDK) and
// runs the very same pipeline as the SDK path (chargeAndServe). What it skips is the per-request SDK server, its
// transport and the web Response, so the result is serialised once; and a settled answer (see
// GatedToolAnswer.settled) is not serialised at all after its first reply: its bytes are kept (bounded, least
// recently used first) and only the JSON-RPC id is spliced in.
import type { IncomingMessage, ServerResponse } from 'node:http'
import {
  type AdmittedMessage,
  type Caller,
  legacyToolCall,
  modernResultTail,
  openResultJson,
  type PlainToolCall,
  writeToolResult,
} from '@tollgate/mcp-endpoint'
import { LRUCache } from 'lru-cache'
import { BUDGET_UNAVAILABLE_ERROR, BUDGET_UNAVAILABLE_RETRY_AFTER_SECONDS, type GatedToolAnswer } from '../tools.js'
import { type CallPipelineOptions, chargeAndServe, type ServeStep, serveTool } from './call-pipeline.js'
import { hasGone } from './gate-server.js'

/** Default cap of the settled answers' kept bytes: 32 MiB (the whole USD history is about 0.37 MB). */
export const SETTLED_ANSWER_BYTES = 32 * 1024 * 1024

/** The fast path's two legs and its counters (diagnostics that tests and benches read). */
export interface FastCalls {
  modern(message: AdmittedMessage, res: ServerResponse): Promise<boolean>
  legacy(message: unknown, req: IncomingMessage, res: ServerResponse, who: Caller): Promise<boolean>
  /** tools/call requests answered here, both eras. */
  readonly answered: number
  /** Of those, replies whose result was kept bytes of a settled answer (not serialised for this call). */
  readonly fromSettledBytes: number
}

export function createFastCalls(options: {
  pipeline: CallPipelineOptions
  serverInfo: { name: string; version: string }
  settledAnswerBytes: number
}): FastCalls {
  const { pipeline } = options
  const onFault = pipeline.onFault
  // Serialised results of settled answers, keyed by the answer object itself, least recently used out first once
  // their bytes pass the cap. A result larger than the cap is served but not kept.
  const settled = new LRUCache<GatedToolAnswer, Buffer>({
    maxSize: Math.max(1, options.settledAnswerBytes),
    sizeCalculation: (bytes) => bytes.length,
  })
  const modernTail = modernResultTail(options.serverInfo)
  const serve: ServeStep<PlainToolCall> = (compiled, _params, call) => serveTool(compiled, call.args, onFault)
  let answered = 0
  let fromSettledBytes = 0

  async function answer(call: PlainToolCall, who: Caller, res: ServerResponse, tail: string): Promise<true> {
    const outcome = await chargeAndServe(pipeline, who.authInfo, call.request.params, hasGone(res), serve, call)
    answered++
    // The budget store could not charge: 503 with Retry-After and the fixed JSON-RPC error, as the SDK path answers.
    if (outcome.kind === 'unavailable') {
      answerBudgetUnavailable(res, call.id)
      return true
    }
    let bytes: Buffer | undefined
    const kept = outcome.kind === 'served' ? outcome.answer : undefined
    if (kept?.ok === true && kept.settled === true) {
      bytes = settled.get(kept)
      if (bytes !== undefined) fromSettledBytes++
      else {
        bytes = openResultJson(outcome.result)
        settled.set(kept, bytes)
      }
    }
    writeToolResult(res, call.id, bytes ?? openResultJson(outcome.result), tail)
    return true
  }

  return {
    modern({ plainCall: call, caller }, res) {
      return call === undefined ? NOT_ANSWERED : answer(call, caller, res, modernTail)
    },
    legacy(message, req, res, who) {
      const call = legacyToolCall(message, req.headers)
      return call === undefined ? NOT_ANSWERED : answer(call, who, res, '')
    },
    get answered() {
      return answered
    },
    get fromSettledBytes() {
      return fromSettledBytes
    },
  }
}

const NOT_ANSWERED = Promise.resolve(false)

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
