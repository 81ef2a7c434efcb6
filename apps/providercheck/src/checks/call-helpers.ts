import { errorHttpStatus } from '@tollgate/contract'
import type { CallResult } from '@tollgate/platform-client'
import type { KitContext } from '../check-types.js'
import { CheckFailure, NotApplicable } from '../errors.js'

export type Obj = Record<string, unknown>

/**
 * The fixture a check reads. A sandbox run is always given all three; a live run reads only the fixtures given, so a
 * check that needs one that was not given does not apply (skip not_applicable, naming the flag).
 */
export function fixture(ctx: KitContext, name: 'customer' | 'transaction' | 'subscription'): string {
  const ref = ctx.fixtures[name]
  if (ref === undefined || ref === '') throw new NotApplicable(`no -${name} given: this live check reads none`)
  return ref
}

/** Calls a tool and insists on a result object (an error envelope fails the check with unexpected_status). */
export async function callOk(ctx: KitContext, name: string, args: Obj): Promise<Obj> {
  const out = await ctx.client.callTool(name, args, ctx.call)
  if (out.kind === 'result') return out.value as Obj
  throw unexpected(name, out, 'a result')
}

/**
 * Calls a tool and insists on an error envelope with this code; a result fails with whenResult. Over REST the
 * HTTP status must be the seed's table status for the code: another one fails status_not_<table status>.
 */
export async function callRefused(
  ctx: KitContext,
  name: string,
  args: Obj,
  code: string,
  whenResult: string,
): Promise<string> {
  const out = await ctx.client.callTool(name, args, ctx.call)
  const tableStatus = errorHttpStatus(code)
  if (ctx.transport === 'rest' && out.kind === 'error' && out.status !== tableStatus && out.status < 500) {
    throw new CheckFailure(
      `status_not_${tableStatus}`,
      `${name} answered ${out.code} with HTTP ${out.status} where the seed's table says ${tableStatus} ${code}`,
    )
  }
  if (out.kind === 'error' && out.code === code) {
    return `${name} answered ${code} (${out.status})${out.retryable ? ' marked retryable' : ''}`
  }
  if (out.kind === 'result') throw new CheckFailure(whenResult, `${name} answered a result where ${code} was expected`)
  throw unexpected(name, out, code)
}

export function unexpected(name: string, out: CallResult, wanted: string): CheckFailure {
  if (out.kind === 'error') {
    // An internal_error's message is where a sandbox provider names the field its billing port got wrong
    // (`transaction.settlement: required`): the merchant reading the report needs it more than the code.
    const said = out.code === 'internal_error' && out.message !== '' ? ` saying "${shown(out.message)}"` : ''
    return new CheckFailure(
      'unexpected_status',
      `${name} answered ${out.code} (${out.status})${said}, expected ${wanted}`,
    )
  }
  if (out.kind === 'verified')
    return new CheckFailure('no_answer', `${name} gave no answer after ${out.attempts} attempts (${out.lastFailure})`)
  return new CheckFailure('unexpected_status', `${name} answered a result, expected ${wanted}`)
}

/** A provider's text as a report may show it: one line, at most 300 characters. */
function shown(text: string): string {
  let line = ''
  // Control characters (C0 and DEL) become spaces, a run of them one space: a report line stays one line.
  for (const ch of text) {
    const code = ch.charCodeAt(0)
    const control = code < 0x20 || code === 0x7f
    if (!control) line += ch
    else if (!line.endsWith(' ')) line += ' '
  }
  return line.length > 300 ? `${line.slice(0, 300)}…` : line
}

/** Fails with unexpected_result when the condition does not hold. */
export function expect(condition: boolean, reason: string): void {
  if (!condition) throw new CheckFailure('unexpected_result', reason)
}

/**
 * A dry run's verdict: it answered would_succeed without a key, and `before` (re-read by `reread`) is unchanged.
 * `what` names the object in the failure reason ("transaction", "subscription").
 */
export async function expectHarmlessDryRun(
  answer: Obj,
  before: unknown,
  reread: () => Promise<unknown>,
  what: string,
): Promise<void> {
  expect(
    answer.status === 'would_succeed',
    `a dry run answered status ${String(answer.status)}, expected would_succeed`,
  )
  expect(answer.idempotency_key === null, 'a dry run answered an idempotency_key')
  if (!sameJson(before, await reread()))
    throw new CheckFailure('dry_run_changed_data', `the ${what} changed after a dry run`)
}

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Deep equality by canonical form (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  return stable(a) === stable(b)
}

function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`
  if (isObj(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(value[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'undefined'
}

/** Minor units left to refund on a contract transaction (refunds not reversed). */
export function refundableMinor(transaction: Obj): number {
  const amount = (transaction.amount as { amount_minor: number }).amount_minor
  const refunds = Array.isArray(transaction.refunds) ? (transaction.refunds as Obj[]) : []
  return refunds.reduce(
    (left, r) =>
      r.reversed_at === null || r.reversed_at === undefined
        ? left - (r.amount as { amount_minor: number }).amount_minor
        : left,
    amount,
  )
}
