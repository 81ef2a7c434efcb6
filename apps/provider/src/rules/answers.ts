// Tool answers: a contract object (structuredContent) or the error envelope (isError: true).
import type { ContractObject } from '../billing/port.js'
import { StoreError } from '../errors.js'
import { outageOf, RETRY_AFTER_SECONDS } from '../store/outage.js'

export type ToolAnswer =
  | { ok: true; body: ContractObject }
  | {
      ok: false
      body: { error: { code: string; message: string; retryable: boolean } }
      /** What the billing port threw, for the call's log line (class, message, stack); never sent. */
      fault?: unknown
      /**
       * Seconds to wait, sent as Retry-After on REST and on the MCP fast paths: an outage (`unavailable`), and a key
       * another call still holds (`in_progress`).
       */
      retryAfterSeconds?: number
    }

// Retryable per the contract: the same call with the same key may succeed later.
const RETRYABLE = new Set(['in_progress', 'rate_limited', 'internal_error', 'unavailable'])

// Any contract object (Transaction, RefundResult, …): the answer is checked against the tool's schema before it leaves.
export const ok = (body: object): ToolAnswer => ({ ok: true, body: body as ContractObject })
export type ToolFailure = Extract<ToolAnswer, { ok: false }>

export const fail = (code: string, message: string, fault?: unknown): ToolFailure => ({
  ok: false,
  body: { error: { code, message, retryable: RETRYABLE.has(code) } },
  ...(fault !== undefined && { fault }),
})
export const invalid = (message: string) => fail('invalid_request', message)
export const notFound = () => fail('not_found', 'no such object')

/**
 * Seconds a caller of a key that another call still holds is told to wait. Short: the holder usually answers within
 * a second, and a holder that failed ends its lease as soon as the store takes the write (ProviderRules), so the
 * retry then resumes the operation instead of waiting out the lease.
 */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 1

/** `in_progress` (409), with its Retry-After. */
export const inProgress = (): ToolFailure => ({
  ...fail('in_progress', 'a call with this key is still running; retry later'),
  retryAfterSeconds: IN_PROGRESS_RETRY_AFTER_SECONDS,
})

/**
 * The answer to a call that failed on `error`, when the error is an outage (the store or the database behind the
 * billing port unreachable, frozen past its timeouts, out of disk, too contended): `unavailable` with the outage's
 * Retry-After. undefined for any other error (a fault of this program, answered internal_error).
 */
export function outageAnswer(error: unknown): ToolFailure | undefined {
  const outage = error instanceof StoreError ? error.outage : outageOf(error)
  if (outage === undefined) return undefined
  const message =
    error instanceof StoreError
      ? "the provider's store is unavailable; retry with the same key"
      : 'the billing system is unavailable; retry with the same key'
  return { ...fail('unavailable', message, error), retryAfterSeconds: RETRY_AFTER_SECONDS[outage.kind] }
}
