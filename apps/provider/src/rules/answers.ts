// Tool answers: a contract object (structuredContent) or the error envelope (isError: true).
import type { ContractObject } from '../billing/port.js'

export type ToolAnswer =
  | { ok: true; body: ContractObject }
  | {
      ok: false
      body: { error: { code: string; message: string; retryable: boolean } }
      /** What the billing port threw, for the call's log line (class, message, stack); never sent. */
      fault?: unknown
    }

// Retryable per the contract: the same call with the same key may succeed later.
const RETRYABLE = new Set(['in_progress', 'rate_limited', 'internal_error', 'unavailable'])

// Any contract object (Transaction, RefundResult, …): the answer is checked against the tool's schema before it leaves.
export const ok = (body: object): ToolAnswer => ({ ok: true, body: body as ContractObject })
export const fail = (code: string, message: string, fault?: unknown): ToolAnswer => ({
  ok: false,
  body: { error: { code, message, retryable: RETRYABLE.has(code) } },
  ...(fault !== undefined && { fault }),
})
export const invalid = (message: string) => fail('invalid_request', message)
export const notFound = () => fail('not_found', 'no such object')
