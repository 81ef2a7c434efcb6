// Tool answers: a contract object (structuredContent) or the error envelope (isError: true).
import type { ContractObject } from '../billing/port.js'

export type ToolAnswer =
  | { ok: true; body: ContractObject }
  | { ok: false; body: { error: { code: string; message: string; retryable: boolean } } }

// Retryable per the contract: the same call with the same key may succeed later.
const RETRYABLE = new Set(['in_progress', 'rate_limited', 'internal_error', 'unavailable'])

export const ok = (body: ContractObject): ToolAnswer => ({ ok: true, body })
export const fail = (code: string, message: string): ToolAnswer => ({
  ok: false,
  body: { error: { code, message, retryable: RETRYABLE.has(code) } },
})
export const invalid = (message: string) => fail('invalid_request', message)
export const notFound = () => fail('not_found', 'no such object')
