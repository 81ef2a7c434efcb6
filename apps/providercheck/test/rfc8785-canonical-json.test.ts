// canonicalJson is RFC 8785 (JCS): the RFC's own examples, byte for byte.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { canonicalJson } from '../src/index.js'

test('RFC 8785 §3.2.3: keys sort by UTF-16 code units', () => {
  const value = {
    '\u20ac': 'Euro Sign',
    '\r': 'Carriage Return',
    '\ufb33': 'Hebrew Letter Dalet With Dagesh',
    '1': 'One',
    '\ud83d\ude00': 'Emoji: Grinning Face',
    '\u0080': 'Control',
    '\u00f6': 'Latin Small Letter O With Diaeresis',
  }
  const keys = [...canonicalJson(value).matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) => JSON.parse(`"${m[1]}"`))
  assert.deepEqual(keys, ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'])
})

test('RFC 8785 Appendix B: numbers serialise as ECMAScript does', () => {
  const cases: Array<[number, string]> = [
    [0, '0'],
    [-0, '0'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [9007199254740992, '9007199254740992'],
    [1e21, '1e+21'],
    [0.000001, '0.000001'],
    [1e-7, '1e-7'],
  ]
  for (const [n, text] of cases) assert.equal(canonicalJson(n), text, String(n))
})

test('RFC 8785 §3.2.2: no whitespace, minimal string escapes, nesting kept', () => {
  assert.equal(
    canonicalJson({ b: [true, null, 'a\u000f\n"\\/é'], a: { d: 1, c: 2.5 } }),
    '{"a":{"c":2.5,"d":1},"b":[true,null,"a\\u000f\\n\\"\\\\/é"]}',
  )
})

test('values JSON cannot carry are refused', () => {
  assert.throws(() => canonicalJson(Number.NaN), TypeError)
  assert.throws(() => canonicalJson(() => 1), TypeError)
})
