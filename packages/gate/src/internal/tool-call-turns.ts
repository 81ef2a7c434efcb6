// The gate's aroundToolCall (the hook @tollgate/mcp-endpoint declares, on both eras): every POST holding a
// tools/call is recorded for the SDK path's charge while it is served, and waits for its caller's turn when there is
// a scheduler.
// A caller whose queue is full is answered 429 at once, before any charge.
import type { AroundToolCall, ToolCallExchange } from '@tollgate/mcp-endpoint'
import { CallerQueueFull } from '../errors.js'
import type { CallScheduler } from '../fair-scheduler.js'
import type { SdkExchanges } from './gate-server.js'

/** Seconds a caller refused for a full queue is told to wait (HTTP's Retry-After counts whole seconds). */
const QUEUE_FULL_RETRY_AFTER_SECONDS = 1

export function turnTaking(
  scheduler: CallScheduler | undefined,
  exchanges: SdkExchanges,
  onQueueFull: (caller: string, limit: number) => void,
): AroundToolCall {
  return (exchange, serve) => {
    const authInfo = exchange.caller.authInfo
    // Recorded for as long as it is served, in a Map, never a WeakMap: a WeakMap entry per call (an ephemeron whose
    // key dies young) cost quenchz ~30% more CPU per call in garbage collection (bench/metrics.bench.ts, before/after).
    const served =
      authInfo === undefined
        ? () => serve(exchange)
        : () => {
            exchanges.set(authInfo, exchange)
            return serve(exchange).finally(() => {
              if (exchanges.get(authInfo) === exchange) exchanges.delete(authInfo)
            })
          }
    // The caller is the admitted token's sub: as the SDK sees it on the modern era, as the session binds it on 2025's.
    const caller = exchange.era === 'legacy' ? exchange.caller.caller : authInfo?.clientId
    if (scheduler === undefined || caller === undefined) return served()
    return scheduler.run(caller, served).catch((error: unknown) => {
      if (!(error instanceof CallerQueueFull)) throw error
      onQueueFull(caller, error.limit)
      refuseQueueFull(exchange, error)
    })
  }
}

/**
 * HTTP 429 with Retry-After, and a JSON-RPC error per request in the message (code -32000, the retry hint in
 * `data`). Both official SDK clients reject the call with the status and this body's text in the error; a client
 * fetch wrapper or proxy that honours 429 + Retry-After can retry without knowing MCP. Nothing was charged or run.
 */
function refuseQueueFull({ res, message }: ToolCallExchange, refusal: CallerQueueFull): void {
  const error = {
    code: -32000,
    message: refusal.message,
    data: { reason: 'queue-full', retryAfterSeconds: QUEUE_FULL_RETRY_AFTER_SECONDS },
  }
  const ids = (Array.isArray(message) ? message : [message])
    .map((m) => (m as { id?: unknown } | null)?.id)
    .filter((id) => typeof id === 'string' || typeof id === 'number')
  const answers = ids.map((id) => ({ jsonrpc: '2.0', id, error }))
  const body = JSON.stringify(Array.isArray(message) ? answers : (answers[0] ?? { jsonrpc: '2.0', id: null, error }))
  res.writeHead(429, {
    'content-type': 'application/json',
    'retry-after': String(QUEUE_FULL_RETRY_AFTER_SECONDS),
    'content-length': String(Buffer.byteLength(body)),
  })
  res.end(body)
}
