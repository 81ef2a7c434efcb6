// Exact conversion on integer minor units: one rounding, half to even, BigInt on the rates' decimal text.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { convertMinor, divideHalfEven, minorUnitExponent } from '../../src/rates/index.js'

describe('divideHalfEven', () => {
  for (const [n, d, expected] of [
    [5n, 2n, 2n],
    [7n, 2n, 4n],
    [-5n, 2n, -2n],
    [-7n, 2n, -4n],
    [10n, 4n, 2n],
    [11n, 4n, 3n],
    [9n, 4n, 2n],
    [-9n, 4n, -2n],
    [-11n, 4n, -3n],
    [6n, 3n, 2n],
  ] as const) {
    test(`${n}/${d} rounds to ${expected}`, () => assert.equal(divideHalfEven(n, d), expected))
  }
  test('refuses a non-positive denominator', () => assert.throws(() => divideHalfEven(1n, 0n), RangeError))
})

describe('convertMinor', () => {
  const eur = { rate: '1', exponent: 2 }
  test('EUR 0.05 at 1.1 is 5.5 cents: a tie, rounded to even 6', () => {
    assert.equal(convertMinor(5n, eur, { rate: '1.1', exponent: 2 }), 6n)
  })
  test('EUR 0.15 at 1.1 is 16.5 cents: a tie, rounded to even 16', () => {
    assert.equal(convertMinor(15n, eur, { rate: '1.1', exponent: 2 }), 16n)
  })
  test('USD 100.00 to JPY at 1.1711 and 186.43: 15,919 yen (exactly 15919.22…)', () => {
    assert.equal(convertMinor(10000n, { rate: '1.1711', exponent: 2 }, { rate: '186.43', exponent: 0 }), 15919n)
  })
  test('JPY 15,919 back to USD cents: 9,999.9 → 10,000 cents, rounding once each way', () => {
    assert.equal(convertMinor(15919n, { rate: '186.43', exponent: 0 }, { rate: '1.1711', exponent: 2 }), 10000n)
  })
  test('no float is involved: 0.1 + 0.2 style inputs stay exact', () => {
    // 3 cents at 0.3/0.1 = 9 cents exactly; a float path gives 8.999999999999998.
    assert.equal(convertMinor(3n, { rate: '0.1', exponent: 2 }, { rate: '0.3', exponent: 2 }), 9n)
  })
  test('amounts far beyond 2^53 are exact', () => {
    assert.equal(convertMinor(10n ** 30n, eur, { rate: '1.1711', exponent: 2 }), 1171100000000000000000000000000n)
  })
  test('minor-unit exponents: JPY, KRW and ISK 0, the rest of the table 2, unknown null', () => {
    assert.deepEqual(['JPY', 'KRW', 'ISK', 'USD', 'EUR', 'HUF', 'XAU', 'toString'].map(minorUnitExponent), [
      0,
      0,
      0,
      2,
      2,
      2,
      null,
      null,
    ])
  })
})
