import assert from 'node:assert/strict'
import { test } from 'node:test'
import { JsonNumber } from '@tollgate/strict-json'

test('an integer is a lexeme without fraction or exponent', () => {
  assert.equal(new JsonNumber('1500').isInteger, true)
  assert.equal(new JsonNumber('-7').isInteger, true)
  assert.equal(new JsonNumber('1500.0').isInteger, false)
  assert.equal(new JsonNumber('15e2').isInteger, false)
  assert.equal(new JsonNumber('1E+2').isInteger, false)
})

test('toBigInt compares huge integers exactly', () => {
  assert.equal(new JsonNumber('123456789012345678901234567890').toBigInt(), 123456789012345678901234567890n)
  assert.equal(new JsonNumber('-9007199254740993').toBigInt(), -9007199254740993n)
  assert.throws(() => new JsonNumber('1.0').toBigInt(), { code: 'ERR_STRICT_JSON_NOT_INTEGER' })
})

test('toNumber and toString', () => {
  assert.equal(new JsonNumber('2.5e-3').toNumber(), 0.0025)
  assert.equal(String(new JsonNumber('1.50')), '1.50')
})

test('the public constructor validates the lexeme', () => {
  for (const bad of ['', '01', '+1', '1.', '.5', 'NaN', 'Infinity', ' 1', '1 ', '0x10']) {
    assert.throws(() => new JsonNumber(bad), { code: 'ERR_STRICT_JSON_SYNTAX' }, bad)
  }
  assert.throws(() => new JsonNumber('1e400'), { code: 'ERR_STRICT_JSON_NUMBER_OVERFLOW' })
})
