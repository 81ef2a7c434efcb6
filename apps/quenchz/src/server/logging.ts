// What quenchz logs: one line per gate event and per change the budget store notices (never a token, an argument or
// a name the caller typed), and the readiness that logs each change once.
import type { BudgetStoreEvent, GateEvent } from '@tollgate/gate'
import { Health } from '@tollgate/operability'
import type { Logger } from 'pino'
import type { SharedBudgetStore } from './deployment.js'

/** Where a line goes before the log exists (serving is not yet certain): stderr, as the message and its fields. */
export type EarlyLine = (line: string) => void

/**
 * One log line per change the budget store notices (never one per call): a charge failing (calls answered 503 until
 * it answers), answering again, Redis having lost the budget's state (the epoch key gone: reseeded or refusing), or
 * another replica having reseeded it.
 */
export function logStoreEvent(
  event: BudgetStoreEvent,
  prefix: string,
  log: Logger | undefined,
  early: EarlyLine,
): void {
  const line = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, msg: string) =>
    log !== undefined ? log[level](fields, msg) : early(`${msg} ${JSON.stringify(fields)}`)
  switch (event.kind) {
    case 'unavailable':
      line('warn', { cause: event.cause }, 'budget store failed: calls are answered 503 until it answers')
      return
    case 'available':
      line('info', {}, 'budget store answers again')
      return
    case 'state-lost':
      if (event.action === 'reseeded')
        line('error', { action: 'reseeded' }, 'the budget Redis lost its state: every caller starts full again')
      else
        line(
          'error',
          { action: 'refusing', acknowledge: `SET ${prefix}epoch acknowledged` },
          'the budget Redis lost its state: every call is refused until an operator acknowledges it',
        )
      return
    case 'epoch-changed':
      line('info', {}, 'the budget state was reseeded elsewhere (another replica or an operator); following it')
  }
}

/**
 * Readiness: the budget store answers (Redis PING on the budget's own connection; the in-memory budget always does)
 * and the server is not draining. The rates source is not checked: it is loaded before listening (a file that
 * cannot be read stops the start), and an unreachable ECB API is answered per call as `vendor_unavailable`, the same
 * on every replica, so taking one out of rotation would not help. Each change is logged once.
 */
export function readiness(shared: SharedBudgetStore | undefined, log: Logger): Health {
  return new Health({
    ...(shared !== undefined && { checks: { 'budget-store': () => shared.ping() } }),
    onChange: ({ ready, failing }) => {
      if (ready) log.info('ready')
      else log.warn({ failing: failing.map((f) => f.name) }, 'not ready')
    },
  })
}

/**
 * Outcomes logged as `call refused`: each its own word, though over-budget and unknown-caller get the same answer
 * (concealment). unavailable: the budget store could not charge (503); abandoned: the client had gone first.
 */
const REFUSED: ReadonlySet<string> = new Set([
  'over-budget',
  'unknown-caller',
  'no-such-tool',
  'unavailable',
  'abandoned',
])

/**
 * One log line per event: `info` for a served call (caller, tool, outcome, where its unit came from, the budget left
 * after it, duration),
 * `warn` for every refusal with its reason. Never a token, an argument or a name the caller typed.
 */
export function logEvent(log: Logger): (event: GateEvent) => void {
  return (event) => {
    switch (event.kind) {
      case 'call': {
        const line = {
          sub: event.caller,
          tool: event.tool ?? null,
          outcome: event.outcome,
          charged: event.charged ?? null,
          left: event.left ?? null,
          ms: Math.round(event.durationMs * 10) / 10,
        }
        if (REFUSED.has(event.outcome)) log.warn(line, 'call refused')
        else log.info(line, 'call')
        return
      }
      case 'refused-token':
        log.warn({ reason: event.code, library: event.libraryError }, 'token refused')
        return
      case 'refused-queue-full':
        log.warn({ sub: event.caller, tool: null, outcome: 'queue-full', limit: event.limit }, 'call refused')
        return
      case 'refused-host':
        log.warn({ status: event.status }, 'host refused')
        return
      case 'fault':
        // A budget store that cannot charge is logged once per outage by the store itself (logStoreEvent); each call
        // it refused is its own 'call refused' line with outcome 'unavailable'.
        if (event.code === 'budget-store') log.debug({ code: event.code, err: event.error }, 'server fault')
        else log.error({ code: event.code, tool: event.tool, err: event.error }, 'server fault')
    }
  }
}
