import { StrictJsonError } from './errors.js'
import { JsonNumber } from './json-number.js'
import { type JsonValue, type ParseOptions, parseBytes } from './parse-strict.js'

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

function plainNumber(n: JsonNumber, integersOnly: boolean): number {
  if (!n.isInteger) {
    if (integersOnly) throw new StrictJsonError('ERR_STRICT_JSON_NOT_INTEGER')
    return n.toNumber()
  }
  const b = n.toBigInt()
  // An integer that a double cannot hold exactly would silently change value: refuse it instead.
  if (b > MAX_SAFE || b < -MAX_SAFE) throw new StrictJsonError('ERR_STRICT_JSON_UNSAFE_INTEGER')
  return n.toNumber()
}

/**
 * Converts a parsed value to plain JS values: JsonNumber → number, objects stay null-prototype.
 * Throws ERR_STRICT_JSON_UNSAFE_INTEGER for any integer lexeme outside ±(2^53-1) and, with `integersOnly`,
 * ERR_STRICT_JSON_NOT_INTEGER for a lexeme with fraction or exponent (`2000.0`, `15e2`). Iterative: no stack limit.
 */
export function toPlain(value: JsonValue, options?: { integersOnly?: boolean }): unknown {
  const integersOnly = options?.integersOnly === true
  const convert = (v: JsonValue): unknown => {
    if (v instanceof JsonNumber) return plainNumber(v, integersOnly)
    if (v === null || typeof v !== 'object') return v
    return Array.isArray(v) ? new Array<unknown>(v.length) : Object.create(null)
  }
  const root = convert(value)
  // Work list of (source, copy) container pairs still to fill.
  const work: [JsonValue[] | Record<string, JsonValue>, unknown[] | Record<string, unknown>][] = []
  if (root !== null && typeof root === 'object')
    work.push([value as Record<string, JsonValue>, root as object as Record<string, unknown>])
  while (work.length > 0) {
    const [src, dst] = work.pop()!
    if (Array.isArray(src)) {
      const out = dst as unknown[]
      for (let i = 0; i < src.length; i++) {
        const c = convert(src[i]!)
        out[i] = c
        if (c !== null && typeof c === 'object') work.push([src[i] as JsonValue[], c as unknown[]])
      }
    } else {
      const out = dst as Record<string, unknown>
      for (const k of Object.keys(src)) {
        const c = convert(src[k]!)
        out[k] = c
        if (c !== null && typeof c === 'object')
          work.push([src[k] as Record<string, JsonValue>, c as Record<string, unknown>])
      }
    }
  }
  return root
}

/**
 * parseStrict then toPlain in one pass (numbers become JS numbers as they are read). Same errors as both.
 */
export function parsePlain(bytes: Uint8Array, options: ParseOptions & { integersOnly?: boolean }): unknown {
  return parseBytes(bytes, options, options?.integersOnly === true ? 'integers' : 'plain')
}
