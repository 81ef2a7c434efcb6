import { JsonNumber, type JsonObject, type JsonValue } from '@tollgate/strict-json'

const MAX_AMOUNT_MINOR = 9007199254740991n
// `example-` plus a non-empty ASCII suffix: first a letter or digit, then letters, digits, '.', '_' or '-'.
const EXAMPLE_ID = /^example-[A-Za-z0-9][A-Za-z0-9._-]*$/
const CURRENCIES: ReadonlySet<string> = new Set(['RUB', 'USD', 'EUR'])

/** A JSON object (not an array, not null, not a number). */
export function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber)
}

/** True when `o` has every required key, optional keys only from the list, and nothing else. */
export function hasExactKeys(o: JsonObject, required: readonly string[], optional: readonly string[] = []): boolean {
  for (const k of required) if (!Object.hasOwn(o, k)) return false
  for (const k of Object.keys(o)) if (!required.includes(k) && !optional.includes(k)) return false
  return true
}

/** A JSON integer lexeme (no fraction, no exponent); booleans and numeric strings are not. */
export function isJsonInteger(v: JsonValue | undefined): v is JsonNumber {
  return v instanceof JsonNumber && v.isInteger
}

/** Integer from 1 to 9007199254740991 inclusive, compared exactly. */
export function isAmountMinor(v: JsonValue | undefined): v is JsonNumber {
  if (!isJsonInteger(v)) return false
  const b = v.toBigInt()
  return b >= 1n && b <= MAX_AMOUNT_MINOR
}

/** A synthetic `example-` identifier; no trimming or normalisation. */
export function isExampleId(v: JsonValue | undefined): v is string {
  return typeof v === 'string' && EXAMPLE_ID.test(v)
}

/** Exactly "RUB", "USD" or "EUR". */
export function isCurrency(v: JsonValue | undefined): v is string {
  return typeof v === 'string' && CURRENCIES.has(v)
}

/** A JSON-RPC id this profile accepts: an exact integer of any size, or any string (the empty string included). */
export function isRpcId(v: JsonValue | undefined): v is string | JsonNumber {
  return typeof v === 'string' || isJsonInteger(v)
}

/** Same type and same value: `1` never equals `"1"`; integers compare exactly at any size. */
export function sameRpcId(a: string | JsonNumber, b: string | JsonNumber): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b
  return a.toBigInt() === b.toBigInt()
}

/** Exact integer equality of two amounts. */
export function sameInteger(a: JsonNumber, b: JsonNumber): boolean {
  return a.toBigInt() === b.toBigInt()
}
