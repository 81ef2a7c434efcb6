import {
  JsonNumber,
  type JsonObject,
  type JsonValue,
  parseStrict,
  StrictJsonError,
  toPlain,
} from '@tollgate/strict-json'
import {
  BodyTooLarge,
  DuplicateKeyInBody,
  JsonRpcErrorAnswer,
  MalformedBody,
  NoAnswer,
  NonIntegerNumber,
  type PlatformClientError,
  type RequestPhase,
  UnexpectedHttpStatus,
} from '../errors.js'
import { STRICT_LIMITS } from '../limits.js'
import type { Received } from './http.js'
import { retryAfterMs } from './retry-after.js'

/** Reads one JSON-RPC message from received bytes with the strict reader. */
export function readMessage(
  bytes: Buffer,
  maxDepth: number = STRICT_LIMITS.maxDepth,
  notObject = 'not a JSON-RPC message',
): JsonObject {
  let value: JsonValue
  try {
    value = parseStrict(bytes, { ...STRICT_LIMITS, maxDepth })
  } catch (error) {
    throw fromStrict(error)
  }
  if (!isObject(value)) throw new MalformedBody(notObject)
  return value
}

/** The `result` object answering a POST, or the error the platform makes of the answer. */
export function resultOf(received: Received, phase: RequestPhase, maxDepth?: number): JsonObject {
  if (received.status !== 200) {
    const body = received.kind === 'body' ? received.body : Buffer.alloc(0)
    throw new UnexpectedHttpStatus(received.status, phase, body, retryAfterMs(received.headers))
  }
  const bytes = received.kind === 'sse' ? received.answer : received.body.length > 0 ? received.body : undefined
  if (bytes === undefined) throw new NoAnswer(phase)
  const message = readMessage(bytes, maxDepth)
  const error = message.error
  if (error !== undefined) {
    const code = isObject(error) && error.code instanceof JsonNumber ? error.code.toNumber() : 0
    throw new JsonRpcErrorAnswer(code, phase)
  }
  const result = message.result
  if (!isObject(result)) throw new MalformedBody('the answer has no result object')
  return result
}

/** Converts a strict value to plain JS; integersOnly turns 2000.0 or an unsafe integer into NonIntegerNumber. */
export function plain(value: JsonValue, integersOnly: boolean): unknown {
  try {
    return toPlain(value, { integersOnly })
  } catch (error) {
    throw fromStrict(error)
  }
}

export function isObject(value: JsonValue | undefined): value is JsonObject {
  return (
    value !== null &&
    value !== undefined &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    !(value instanceof JsonNumber)
  )
}

function fromStrict(error: unknown): PlatformClientError {
  if (!(error instanceof StrictJsonError)) throw error
  switch (error.code) {
    case 'ERR_STRICT_JSON_DUPLICATE_KEY':
      return new DuplicateKeyInBody(error.offset)
    case 'ERR_STRICT_JSON_NOT_INTEGER':
      return new NonIntegerNumber('a fraction or exponent')
    case 'ERR_STRICT_JSON_UNSAFE_INTEGER':
      return new NonIntegerNumber('beyond ±(2^53-1)')
    case 'ERR_STRICT_JSON_TOO_LARGE':
      return new BodyTooLarge(STRICT_LIMITS.maxBytes)
    default:
      return new MalformedBody(error.code.replace('ERR_STRICT_JSON_', '').toLowerCase(), error.offset)
  }
}
