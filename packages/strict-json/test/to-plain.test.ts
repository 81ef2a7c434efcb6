import assert from 'node:assert/strict'
import { test } from 'node:test'
import { parsePlain, parseStrict, toPlain } from '@tollgate/strict-json'

const opts = { maxBytes: 4096, maxDepth: 16 }
const enc = (s: string) => new TextEncoder().encode(s)

test('converts numbers and keeps null-prototype objects', () => {
  const v = toPlain(parseStrict(enc('{"a":[1,2.5,{"b":-3}],"__proto__":0}'), opts)) as Record<string, unknown>
  assert.equal(Object.getPrototypeOf(v), null)
  assert.deepEqual(JSON.parse(JSON.stringify(v)), { a: [1, 2.5, { b: -3 }], ['__proto__']: 0 })
  assert.equal(Object.getPrototypeOf((v.a as unknown[])[2]), null)
})

test('integersOnly refuses 2000.0 and 15e2', () => {
  for (const doc of ['2000.0', '15e2', '[1,{"x":0.5}]']) {
    assert.throws(() => toPlain(parseStrict(enc(doc), opts), { integersOnly: true }), {
      code: 'ERR_STRICT_JSON_NOT_INTEGER',
    })
    assert.throws(() => parsePlain(enc(doc), { ...opts, integersOnly: true }), { code: 'ERR_STRICT_JSON_NOT_INTEGER' })
  }
  assert.deepEqual(parsePlain(enc('[2000]'), { ...opts, integersOnly: true }), [2000])
})

test('an integer outside ±(2^53-1) is refused rather than rounded', () => {
  for (const doc of ['9007199254740992', '-9007199254740992', '[123456789012345678901234567890]']) {
    assert.throws(() => toPlain(parseStrict(enc(doc), opts)), { code: 'ERR_STRICT_JSON_UNSAFE_INTEGER' }, doc)
    assert.throws(() => parsePlain(enc(doc), opts), { code: 'ERR_STRICT_JSON_UNSAFE_INTEGER' }, doc)
  }
  assert.equal(parsePlain(enc('9007199254740991'), opts), 9007199254740991)
  assert.equal(parsePlain(enc('-9007199254740991'), { ...opts, integersOnly: true }), -9007199254740991)
  // A large non-integer lexeme is just a double.
  assert.equal(parsePlain(enc('1e300'), opts), 1e300)
})

test('parsePlain applies the same strictness as parseStrict', () => {
  assert.throws(() => parsePlain(enc('{"a":1,"\\u0061":2}'), opts), { code: 'ERR_STRICT_JSON_DUPLICATE_KEY' })
  assert.throws(() => parsePlain(enc('1e400'), opts), { code: 'ERR_STRICT_JSON_NUMBER_OVERFLOW' })
})
