import { isUtf8 } from 'node:buffer'
import { StrictJsonError, type StrictJsonErrorCode } from './errors.js'
import { firstInvalidUtf8Offset } from './internal/utf8.js'
import { JsonNumber, TRUSTED } from './json-number.js'

/** Limits every parse must state: there is no default, because only the caller knows its input. */
export interface ParseOptions {
  /** Largest accepted input, in bytes (whitespace included). */
  maxBytes: number
  /** Deepest accepted nesting of arrays/objects; a top-level scalar has depth 0, `[]` depth 1. */
  maxDepth: number
}

/** A parsed JSON value. Numbers stay JsonNumber so that their kind and exact lexeme survive. */
export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | JsonObject
/** A parsed JSON object: a null-prototype object, so `__proto__` and `constructor` are ordinary keys. */
export type JsonObject = { [key: string]: JsonValue }

/** How the parser materialises numbers: exact JsonNumber, or a JS number (optionally integers only). */
export type NumberMode = 'exact' | 'plain' | 'integers'

const decoder = new TextDecoder('utf-8', { ignoreBOM: true })

/**
 * Parses UTF-8 JSON bytes strictly (RFC 8259 with no extensions). Throws StrictJsonError: _TOO_LARGE, _BOM,
 * _INVALID_UTF8, _SYNTAX, _TOO_DEEP, _DUPLICATE_KEY (compared after unescaping), _NON_FINITE, _NUMBER_OVERFLOW,
 * _LONE_SURROGATE, _TRAILING_CONTENT. Throws TypeError/RangeError on bad options. Never recurses.
 */
export function parseStrict(bytes: Uint8Array, options: ParseOptions): JsonValue {
  return parseBytes(bytes, options, 'exact') as JsonValue
}

/** @internal shared by parseStrict and parsePlain. */
export function parseBytes(bytes: Uint8Array, options: ParseOptions, mode: NumberMode): unknown {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes must be a Uint8Array')
  checkLimit(options?.maxBytes, 'maxBytes')
  checkLimit(options?.maxDepth, 'maxDepth')
  if (bytes.length > options.maxBytes) throw new StrictJsonError('ERR_STRICT_JSON_TOO_LARGE', options.maxBytes)
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new StrictJsonError('ERR_STRICT_JSON_BOM', 0)
  }
  if (!isUtf8(bytes)) throw new StrictJsonError('ERR_STRICT_JSON_INVALID_UTF8', firstInvalidUtf8Offset(bytes))
  const text = decoder.decode(bytes)
  try {
    return new Parser(text, options.maxDepth, mode).parse()
  } catch (e) {
    if (e instanceof ParseFailure) {
      // Offsets are tracked in UTF-16 units while parsing; convert to bytes only on the error path.
      const offset = text.length === bytes.length ? e.index : Buffer.byteLength(text.slice(0, e.index), 'utf8')
      throw new StrictJsonError(e.code, offset)
    }
    throw e
  }
}

function checkLimit(v: unknown, name: string): void {
  if (typeof v !== 'number') throw new TypeError(`options.${name} must be a number`)
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`options.${name} must be a non-negative safe integer`)
}

/** Characters a string's fast path stops at: its closing quote, an escape, a control character. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what JSON strings forbid.
const STRING_STOP = /["\\\u0000-\u001f]/g
/** After this many plain characters, a string's fast path hands the scan to STRING_STOP. */
const LONG_STRING = 64

class ParseFailure {
  constructor(
    readonly code: StrictJsonErrorCode,
    readonly index: number,
  ) {}
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER
const OBJECT_PROTOTYPE = Object.prototype
const KEY_TABLE_MASK = 1023

class Parser {
  private i = 0
  private readonly n: number
  private readonly keyTable: (string | undefined)[] = new Array(KEY_TABLE_MASK + 1).fill(undefined)

  constructor(
    private readonly t: string,
    private readonly maxDepth: number,
    private readonly mode: NumberMode,
  ) {
    this.n = t.length
  }

  private fail(code: StrictJsonErrorCode, index: number): never {
    throw new ParseFailure(code, index)
  }

  private ws(): void {
    const t = this.t
    let i = this.i
    for (;;) {
      const c = t.charCodeAt(i)
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++
      else break
    }
    this.i = i
  }

  parse(): unknown {
    const t = this.t
    // Explicit stacks instead of recursion: depth is bounded by maxDepth, never by the call stack.
    const containers: (unknown[] | Record<string, unknown>)[] = []
    const keys: string[] = []
    let value: unknown
    this.ws()
    for (;;) {
      // 1. Read one value starting at this.i (containers push and loop back here for their first element).
      const start = this.i
      const c = t.charCodeAt(start)
      if (c === 0x7b /* { */) {
        if (containers.length >= this.maxDepth) this.fail('ERR_STRICT_JSON_TOO_DEEP', start)
        // Built as an ordinary object (fast properties) and switched to a null prototype when it closes.
        const obj: Record<string, unknown> = {}
        this.i = start + 1
        this.ws()
        if (t.charCodeAt(this.i) === 0x7d /* } */) {
          this.i++
          value = Object.setPrototypeOf(obj, null)
        } else {
          keys.push(this.key(obj))
          containers.push(obj)
          this.ws()
          continue
        }
      } else if (c === 0x5b /* [ */) {
        if (containers.length >= this.maxDepth) this.fail('ERR_STRICT_JSON_TOO_DEEP', start)
        this.i = start + 1
        this.ws()
        if (t.charCodeAt(this.i) === 0x5d /* ] */) {
          this.i++
          value = []
        } else {
          containers.push([])
          continue
        }
      } else if (c === 0x22 /* " */) {
        value = this.string()
      } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
        value = this.number()
      } else if (c === 0x74 /* t */ && t.startsWith('true', start)) {
        this.i = start + 4
        value = true
      } else if (c === 0x66 /* f */ && t.startsWith('false', start)) {
        this.i = start + 5
        value = false
      } else if (c === 0x6e /* n */ && t.startsWith('null', start)) {
        this.i = start + 4
        value = null
      } else if (t.startsWith('NaN', start) || t.startsWith('Infinity', start) || t.startsWith('+Infinity', start)) {
        this.fail('ERR_STRICT_JSON_NON_FINITE', start)
      } else {
        this.fail('ERR_STRICT_JSON_SYNTAX', start)
      }

      // 2. Attach the finished value to its parent; close every container that ends here.
      for (;;) {
        const depth = containers.length
        if (depth === 0) {
          this.ws()
          if (this.i < this.n) this.fail('ERR_STRICT_JSON_TRAILING_CONTENT', this.i)
          return value
        }
        const parent = containers[depth - 1]!
        let sep = t.charCodeAt(this.i)
        if (sep <= 0x20) {
          this.ws()
          sep = t.charCodeAt(this.i)
        }
        if (Array.isArray(parent)) {
          parent.push(value)
          if (sep === 0x2c /* , */) {
            this.i++
            this.ws()
            break
          }
          if (sep !== 0x5d /* ] */) this.fail('ERR_STRICT_JSON_SYNTAX', this.i)
        } else {
          parent[keys.pop()!] = value
          if (sep === 0x2c /* , */) {
            this.i++
            this.ws()
            keys.push(this.key(parent))
            this.ws()
            break
          }
          if (sep !== 0x7d /* } */) this.fail('ERR_STRICT_JSON_SYNTAX', this.i)
        }
        this.i++
        value = containers.pop()
        if (!Array.isArray(value)) Object.setPrototypeOf(value, null)
      }
    }
  }

  /** Reads `"name" :` at this.i, refusing a name already present (after unescaping). */
  private key(obj: Record<string, unknown>): string {
    const start = this.i
    if (this.t.charCodeAt(start) !== 0x22) this.fail('ERR_STRICT_JSON_SYNTAX', start)
    const k = this.keyString()
    // Own keys only: `toString` is not a duplicate just because Object.prototype has it.
    if (Object.hasOwn(obj, k)) this.fail('ERR_STRICT_JSON_DUPLICATE_KEY', start)
    // Keys are attacker-chosen: a name Object.prototype has (`__proto__`, or a polluted setter) gets an own
    // placeholder now, so the plain assignment that follows the value can never reach the prototype.
    if (k in OBJECT_PROTOTYPE) {
      Object.defineProperty(obj, k, { value: null, writable: true, enumerable: true, configurable: true })
    }
    this.ws()
    if (this.t.charCodeAt(this.i) !== 0x3a /* : */) this.fail('ERR_STRICT_JSON_SYNTAX', this.i)
    this.i++
    return k
  }

  /**
   * Reads a member name. Names repeat across objects, so an unescaped name seen before is returned from a small
   * table (no new string, no re-internalisation); escaped names take the general path.
   */
  private keyString(): string {
    const t = this.t
    const n = this.n
    const start = this.i + 1
    let i = start
    let h = 0
    for (;;) {
      if (i >= n) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      const c = t.charCodeAt(i)
      if (c === 0x22) break
      if (c === 0x5c) return this.string()
      if (c < 0x20) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      h = (h * 31 + c) | 0
      i++
    }
    this.i = i + 1
    const len = i - start
    const slot = (h ^ len) & KEY_TABLE_MASK
    const cached = this.keyTable[slot]
    if (cached !== undefined && cached.length === len && t.startsWith(cached, start)) return cached
    const k = t.slice(start, i)
    this.keyTable[slot] = k
    return k
  }

  /** Reads a string starting at the opening quote at this.i. */
  private string(): string {
    const t = this.t
    const n = this.n
    let i = this.i + 1
    const start = i
    for (;;) {
      if (i >= n) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      // Long runs: let the regex engine find the stop character (a 1 MiB string is one native scan, not a million
      // steps of a loop that a short-lived process never gets to optimise).
      if (i - start === LONG_STRING) {
        STRING_STOP.lastIndex = i
        const stop = STRING_STOP.exec(t)
        i = stop === null || stop.index >= n ? n : stop.index
        if (i >= n) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      }
      const c = t.charCodeAt(i)
      if (c === 0x22) {
        this.i = i + 1
        return t.slice(start, i)
      }
      if (c === 0x5c) break
      if (c < 0x20) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      i++
    }
    // Slow path: the string has escapes.
    let out = t.slice(start, i)
    let runStart = i
    for (;;) {
      if (i >= n) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      const c = t.charCodeAt(i)
      if (c === 0x22) {
        this.i = i + 1
        return out + t.slice(runStart, i)
      }
      if (c < 0x20) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      if (c !== 0x5c) {
        i++
        continue
      }
      out += t.slice(runStart, i)
      const e = t.charCodeAt(i + 1)
      switch (e) {
        case 0x22:
          out += '"'
          break
        case 0x5c:
          out += '\\'
          break
        case 0x2f:
          out += '/'
          break
        case 0x62:
          out += '\b'
          break
        case 0x66:
          out += '\f'
          break
        case 0x6e:
          out += '\n'
          break
        case 0x72:
          out += '\r'
          break
        case 0x74:
          out += '\t'
          break
        case 0x75: {
          const u = this.hex4(i + 2)
          if (u >= 0xd800 && u <= 0xdbff) {
            // A high surrogate must be followed immediately by an escaped low surrogate.
            if (t.charCodeAt(i + 6) !== 0x5c || t.charCodeAt(i + 7) !== 0x75) {
              this.fail('ERR_STRICT_JSON_LONE_SURROGATE', i)
            }
            const lo = this.hex4(i + 8)
            if (lo < 0xdc00 || lo > 0xdfff) this.fail('ERR_STRICT_JSON_LONE_SURROGATE', i)
            out += String.fromCharCode(u, lo)
            i += 6
          } else if (u >= 0xdc00 && u <= 0xdfff) {
            this.fail('ERR_STRICT_JSON_LONE_SURROGATE', i)
          } else {
            out += String.fromCharCode(u)
          }
          i += 4
          break
        }
        default:
          this.fail('ERR_STRICT_JSON_SYNTAX', i)
      }
      i += 2
      runStart = i
    }
  }

  private hex4(at: number): number {
    let v = 0
    for (let k = 0; k < 4; k++) {
      const c = this.t.charCodeAt(at + k)
      let d: number
      if (c >= 0x30 && c <= 0x39) d = c - 0x30
      else if (c >= 0x61 && c <= 0x66) d = c - 0x57
      else if (c >= 0x41 && c <= 0x46) d = c - 0x37
      else return this.fail('ERR_STRICT_JSON_SYNTAX', at + k)
      v = v * 16 + d
    }
    return v
  }

  /** Reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at this.i. */
  private number(): unknown {
    const t = this.t
    const start = this.i
    let i = start
    if (t.charCodeAt(i) === 0x2d) {
      i++
      if (t.startsWith('Infinity', i)) this.fail('ERR_STRICT_JSON_NON_FINITE', start)
    }
    let c = t.charCodeAt(i)
    if (c === 0x30) {
      i++
    } else if (c >= 0x31 && c <= 0x39) {
      do c = t.charCodeAt(++i)
      while (c >= 0x30 && c <= 0x39)
    } else {
      this.fail('ERR_STRICT_JSON_SYNTAX', i)
    }
    let isInteger = true
    c = t.charCodeAt(i)
    if (c === 0x2e /* . */) {
      isInteger = false
      c = t.charCodeAt(++i)
      if (!(c >= 0x30 && c <= 0x39)) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      do c = t.charCodeAt(++i)
      while (c >= 0x30 && c <= 0x39)
    }
    let hasExponent = false
    if (c === 0x65 || c === 0x45 /* e E */) {
      isInteger = false
      hasExponent = true
      c = t.charCodeAt(++i)
      if (c === 0x2b || c === 0x2d) c = t.charCodeAt(++i)
      if (!(c >= 0x30 && c <= 0x39)) this.fail('ERR_STRICT_JSON_SYNTAX', i)
      do c = t.charCodeAt(++i)
      while (c >= 0x30 && c <= 0x39)
    }
    // A digit straight after a leading zero ("01") is not a JSON number.
    if (c >= 0x30 && c <= 0x39) this.fail('ERR_STRICT_JSON_SYNTAX', i)
    this.i = i
    const lexeme = t.slice(start, i)
    // Without an exponent, a lexeme of at most 300 characters cannot overflow a double: skip the conversion.
    if (this.mode === 'exact' && !hasExponent && i - start <= 300) return new JsonNumber(lexeme, TRUSTED, isInteger)
    const v = +lexeme
    if (v === Number.POSITIVE_INFINITY || v === Number.NEGATIVE_INFINITY) {
      this.fail('ERR_STRICT_JSON_NUMBER_OVERFLOW', start)
    }
    if (this.mode === 'exact') return new JsonNumber(lexeme, TRUSTED, isInteger)
    if (!isInteger) {
      if (this.mode === 'integers') this.fail('ERR_STRICT_JSON_NOT_INTEGER', start)
      return v
    }
    if (v > MAX_SAFE || v < -MAX_SAFE) this.fail('ERR_STRICT_JSON_UNSAFE_INTEGER', start)
    return v
  }
}
