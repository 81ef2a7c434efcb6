// Reads a REST answer the way the platform does (rest-binding.md §4, §6): the received bytes with the strict
// reader, validated against the contract by $id, the status taken as received.
import { contractValidator, errorHttpStatus } from '@tollgate/contract'
import { InvalidResult, MalformedBody, PlatformClientError, UnexpectedHttpStatus } from '../errors.js'
import type { Received } from './http.js'
import { plain, readMessage } from './messages.js'
import { retryAfterMs } from './retry-after.js'

/** A REST answer read and validated: a result (200) or an error envelope with its HTTP status. */
export type RestAnswer =
  | { kind: 'result'; status: 200; value: unknown; body: Buffer }
  | {
      kind: 'error'
      status: number
      code: string
      retryable: boolean
      message: string
      value: unknown
      body: Buffer
      retryAfterMs?: number
    }

/**
 * 200 → the object, validated against outputRef. 401/403 → UnexpectedHttpStatus (refused before the contract, as
 * over MCP). Any other 4xx → the validated error envelope. 5xx → the envelope when it is one, else
 * UnexpectedHttpStatus (retryable either way). Other statuses → UnexpectedHttpStatus.
 */
export function readRestAnswer(received: Received, outputRef: string, errorRef: string): RestAnswer {
  const body = received.kind === 'body' ? received.body : Buffer.alloc(0)
  const { status } = received
  const retryAfter = retryAfterMs(received.headers)
  const json = isJsonType(received.headers['content-type'])
  if (status === 200) {
    if (!json || received.kind !== 'body') throw new MalformedBody('the answer is not application/json')
    const value = readObject(body)
    const verdict = contractValidator(outputRef)(value)
    if (!verdict.valid) throw new InvalidResult(verdict.errors)
    return { kind: 'result', status: 200, value, body }
  }
  // 401 (a refused signature) and 403 (an edge or token refusal, not in the seed's table) end the attempt before
  // the contract, exactly as over MCP.
  if (status === 401 || status === 403 || status < 400 || status > 599 || !json)
    throw new UnexpectedHttpStatus(status, 'rest', body, retryAfter)
  try {
    const value = readObject(body)
    const verdict = contractValidator(errorRef)(value)
    if (!verdict.valid) throw new InvalidResult(verdict.errors)
    const error = (value as { error: { code: string; message: string; retryable: boolean } }).error
    // A code the contract knows but whose table status is unknown to us cannot be mapped: judge it as invalid.
    errorHttpStatus(error.code)
    const answer = {
      kind: 'error' as const,
      status,
      code: error.code,
      retryable: error.retryable,
      message: error.message,
    }
    return { ...answer, value, body, ...(retryAfter !== undefined && { retryAfterMs: retryAfter }) }
  } catch (error) {
    // A 5xx is retried whatever its body says; a 4xx body that is not the envelope is the provider's fault.
    if (status >= 500 && error instanceof PlatformClientError)
      throw new UnexpectedHttpStatus(status, 'rest', body, retryAfter)
    if (error instanceof PlatformClientError) throw error
    throw new InvalidResult('the error code has no status in the contract')
  }
}

function readObject(body: Buffer): unknown {
  if (body.length === 0) throw new MalformedBody('empty body')
  return plain(readMessage(body, undefined, 'not a JSON object'), true)
}

function isJsonType(header: string | string[] | undefined): boolean {
  const type = String(header ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase()
  return type === 'application/json'
}
