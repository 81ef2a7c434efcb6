import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  JsonNumber,
  type JsonObject,
  type JsonValue,
  parseStrict,
  StrictJsonError,
  toPlain,
} from '@tollgate/strict-json'

const opts = { maxBytes: 1 << 20, maxDepth: 64 }
const PROTO = '__proto__' // a variable, so no tool rewrites v[PROTO] into the accessor v.__proto__
const enc = (s: string) => new TextEncoder().encode(s)
const codeOf = (f: () => unknown): string => {
  try {
    f()
  } catch (e) {
    assert.ok(e instanceof StrictJsonError, 'a StrictJsonError')
    return e.code
  }
  return 'no error'
}

test('keeps each number as its exact lexeme and kind', () => {
  const v = parseStrict(enc('[1500, 1500.0, 15e2, -0, 123456789012345678901234567890]'), opts) as JsonNumber[]
  assert.deepEqual(
    v.map((n) => [n.lexeme, n.isInteger]),
    [
      ['1500', true],
      ['1500.0', false],
      ['15e2', false],
      ['-0', true],
      ['123456789012345678901234567890', true],
    ],
  )
  assert.equal(v[4]!.toBigInt(), 123456789012345678901234567890n)
  assert.notEqual(v[4]!.toBigInt(), 123456789012345678901234567891n)
  assert.equal(v[1]!.toNumber(), 1500)
  assert.equal(
    codeOf(() => v[1]!.toBigInt()),
    'ERR_STRICT_JSON_NOT_INTEGER',
  )
})

test('objects have a null prototype and treat __proto__ as an ordinary own key', () => {
  const v = parseStrict(enc('{"__proto__":{"isAdmin":true},"constructor":"x","toString":1}'), opts) as JsonObject
  assert.equal(Object.getPrototypeOf(v), null)
  assert.deepEqual(Object.keys(v), ['__proto__', 'constructor', 'toString'])
  assert.equal(Object.getPrototypeOf(v[PROTO] as object), null)
  assert.equal((v[PROTO] as JsonObject).isAdmin, true)
  assert.equal(({} as Record<string, unknown>).isAdmin, undefined, 'Object.prototype untouched')
  const empty = parseStrict(enc('{}'), opts) as object
  assert.equal(Object.getPrototypeOf(empty), null)
})

test('keys shadowing a polluted Object.prototype setter become own data properties', () => {
  let setterCalls = 0
  Object.defineProperty(Object.prototype, 'tollgateTrap', {
    set() {
      setterCalls++
    },
    configurable: true,
  })
  try {
    const v = parseStrict(enc('{"tollgateTrap":1}'), opts) as JsonObject
    assert.equal(setterCalls, 0)
    assert.deepEqual(Object.keys(v), ['tollgateTrap'])
  } finally {
    delete (Object.prototype as Record<string, unknown>).tollgateTrap
  }
})

test('compares member names after unescaping: "status" and "st\\u0061tus" are duplicates', () => {
  assert.equal(
    codeOf(() => parseStrict(enc('{"status":1,"st\\u0061tus":2}'), opts)),
    'ERR_STRICT_JSON_DUPLICATE_KEY',
  )
  assert.equal(
    codeOf(() => parseStrict(enc('[{"a":1},{"b":{"c":[{"d":1,"d":1}]}}]'), opts)),
    'ERR_STRICT_JSON_DUPLICATE_KEY',
  )
  // Same name in sibling objects is fine.
  assert.doesNotThrow(() => parseStrict(enc('[{"a":1},{"a":1}]'), opts))
})

test('200,000 nested brackets give TOO_DEEP, not a stack overflow', () => {
  const deepArrays = enc('['.repeat(200_000) + ']'.repeat(200_000))
  assert.equal(
    codeOf(() => parseStrict(deepArrays, opts)),
    'ERR_STRICT_JSON_TOO_DEEP',
  )
  const deepObjects = enc(`${'{"a":'.repeat(200_000)}1${'}'.repeat(200_000)}`)
  assert.equal(
    codeOf(() => parseStrict(deepObjects, { maxBytes: 2 << 20, maxDepth: 1000 })),
    'ERR_STRICT_JSON_TOO_DEEP',
  )
  const unclosed = enc('['.repeat(200_000))
  assert.equal(
    codeOf(() => parseStrict(unclosed, opts)),
    'ERR_STRICT_JSON_TOO_DEEP',
  )
})

test('a caller who allows 200,000 levels gets them parsed iteratively', () => {
  const depth = 200_000
  const v = parseStrict(enc(`${'['.repeat(depth)}1${']'.repeat(depth)}`), { maxBytes: 1 << 20, maxDepth: depth })
  let cur: JsonValue = v
  let levels = 0
  while (Array.isArray(cur)) {
    cur = cur[0]!
    levels++
  }
  assert.equal(levels, depth)
  assert.equal((cur as JsonNumber).lexeme, '1')
  const plain = toPlain(v) as unknown[]
  assert.ok(Array.isArray(plain))
})

test('depth counts containers: maxDepth 0 allows scalars only', () => {
  assert.doesNotThrow(() => parseStrict(enc('"x"'), { maxBytes: 10, maxDepth: 0 }))
  assert.equal(
    codeOf(() => parseStrict(enc('[]'), { maxBytes: 10, maxDepth: 0 })),
    'ERR_STRICT_JSON_TOO_DEEP',
  )
  assert.doesNotThrow(() => parseStrict(enc('[]'), { maxBytes: 10, maxDepth: 1 }))
})

test('the byte limit is exact: limit bytes pass, one more fails before any parsing', () => {
  const ok = enc('"abcd"')
  assert.doesNotThrow(() => parseStrict(ok, { maxBytes: 6, maxDepth: 1 }))
  assert.equal(
    codeOf(() => parseStrict(ok, { maxBytes: 5, maxDepth: 1 })),
    'ERR_STRICT_JSON_TOO_LARGE',
  )
  // Over-limit wins over any other fault in the bytes.
  assert.equal(
    codeOf(() => parseStrict(enc('\uFEFF{'), { maxBytes: 2, maxDepth: 1 })),
    'ERR_STRICT_JSON_TOO_LARGE',
  )
})

test('reads a Uint8Array view at a non-zero offset', () => {
  const backing = enc('xx{"a":1}yy')
  const v = parseStrict(backing.subarray(2, 9), opts) as JsonObject
  assert.equal((v.a as JsonNumber).lexeme, '1')
})

test('error messages never contain input text', () => {
  const secret = 'sk_live_SECRET'
  for (const doc of [`{"${secret}":1,"${secret}":2}`, `["${secret}`, `{"${secret}": NaN}`, `["${secret}"] x`]) {
    try {
      parseStrict(enc(doc), opts)
      assert.fail('should throw')
    } catch (e) {
      assert.ok(e instanceof StrictJsonError)
      assert.ok(!e.message.includes('SECRET'), e.message)
    }
  }
})

test('refuses bad options with TypeError/RangeError', () => {
  assert.throws(() => parseStrict(enc('1'), {} as never), TypeError)
  assert.throws(() => parseStrict(enc('1'), { maxBytes: -1, maxDepth: 1 }), RangeError)
  assert.throws(() => parseStrict(enc('1'), { maxBytes: 10, maxDepth: 1.5 }), RangeError)
  assert.throws(() => parseStrict('1' as never, opts), TypeError)
})

/** Deterministic random JSON text generator for the differential test. */
function randomDoc(seed: number): string {
  let s = seed
  const r = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31
    return s / 2 ** 31
  }
  const strs = ['', 'a', 'é', '😀', '\n', '"', '\\', '\u0000', '\u2028', 'Возврат', '\ud7ff', '\ue000']
  const gen = (d: number): unknown => {
    const k = Math.floor(r() * (d > 4 ? 5 : 7))
    if (k === 0) return null
    if (k === 1) return r() > 0.5
    if (k === 2) return Math.floor((r() - 0.5) * 2 ** 40)
    if (k === 3) return (r() - 0.5) * 10 ** Math.floor(r() * 40 - 20)
    if (k === 4) return strs[Math.floor(r() * strs.length)]! + strs[Math.floor(r() * strs.length)]!
    if (k === 5) return Array.from({ length: Math.floor(r() * 4) }, () => gen(d + 1))
    const o: Record<string, unknown> = {}
    for (let i = Math.floor(r() * 4); i > 0; i--) o[`k${Math.floor(r() * 10)}${strs[i]}`] = gen(d + 1)
    return o
  }
  const text = JSON.stringify(gen(0), null, r() > 0.5 ? 1 : undefined)
  // Escape some non-ASCII so that escaped and raw forms are both exercised.
  return r() > 0.5
    ? text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    : text
}

test('agrees with JSON.parse on 500 random valid documents', () => {
  for (let seed = 1; seed <= 500; seed++) {
    const text = randomDoc(seed)
    const ours = parseStrict(enc(text), opts)
    const asNumbers = JSON.stringify(ours, (_k, v) => (v instanceof JsonNumber ? v.toNumber() : v))
    assert.deepEqual(JSON.parse(asNumbers), JSON.parse(text), `seed ${seed}`)
  }
})

test('many distinct and colliding member names read back exactly (the name table is only a cache)', () => {
  const obj: Record<string, number> = {}
  for (let i = 0; i < 5000; i++) obj[`k${i}`] = i
  // Same length, different content, and names that differ only in their last character.
  for (const k of ['ab', 'ba', 'Aa', 'BB', 'aaaa', 'aaab', 'aaba', 'é', 'ё']) obj[k] = k.length
  const text = JSON.stringify([obj, obj, { k1: 'x', k2: 'y' }])
  const v = parseStrict(enc(text), opts)
  const asNumbers = JSON.stringify(v, (_k, x) => (x instanceof JsonNumber ? x.toNumber() : x))
  assert.deepEqual(JSON.parse(asNumbers), JSON.parse(text))
})

test('a __proto__ member holding a nested value stays an own property with that value', () => {
  const v = parseStrict(enc('[{"__proto__":{"a":[1,{"__proto__":null}]}},{"__proto__":"x"}]'), opts) as JsonObject[]
  const first = v[0]![PROTO] as JsonObject
  assert.deepEqual(Object.keys(first), ['a'])
  assert.equal(((first.a as JsonValue[])[1] as JsonObject)[PROTO], null)
  assert.ok(Object.hasOwn((first.a as JsonValue[])[1] as object, PROTO))
  assert.equal(v[1]![PROTO], 'x')
})

// Strings past the fast loop's first 64 characters are scanned natively: the same answers at every length.
test('long strings: the stop character at, around and far past the hand-over point', () => {
  for (const n of [63, 64, 65, 100, 70_000]) {
    const plain = 'a'.repeat(n)
    assert.equal(parseStrict(enc(`"${plain}"`), opts), plain, `plain ${n}`)
    assert.equal(
      parseStrict(enc(`["${plain}\\n${plain}"]`), opts)?.toString(),
      `${plain}\n${plain}`,
      `escape after ${n}`,
    )
    assert.equal(
      codeOf(() => parseStrict(enc(`"${plain}\u0001"`), opts)),
      'ERR_STRICT_JSON_SYNTAX',
      `control after ${n}`,
    )
    assert.equal(
      codeOf(() => parseStrict(enc(`"${plain}\n"`), opts)),
      'ERR_STRICT_JSON_SYNTAX',
      `newline after ${n}`,
    )
    assert.equal(
      codeOf(() => parseStrict(enc(`"${plain}`), opts)),
      'ERR_STRICT_JSON_SYNTAX',
      `unterminated ${n}`,
    )
  }
})
