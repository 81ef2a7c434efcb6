// Amounts read unambiguously: minor units first (what the contract carries), the major amount beside them.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatAmount } from '../src/index.js'

test('an amount is `N minor (M CUR)` with the currency exponent applied in integers', () => {
  assert.equal(formatAmount(2000, 'USD'), '2000 minor (20.00 USD)')
  assert.equal(formatAmount(4999, 'USD'), '4999 minor (49.99 USD)')
  assert.equal(formatAmount(5, 'EUR'), '5 minor (0.05 EUR)')
  assert.equal(formatAmount(0, 'USD'), '0 minor (0.00 USD)')
  assert.equal(formatAmount(-150, 'USD'), '-150 minor (-1.50 USD)')
  assert.equal(formatAmount(1500, 'JPY'), '1500 minor (1500 JPY)')
  assert.equal(formatAmount(1234, 'BHD'), '1234 minor (1.234 BHD)')
  assert.equal(formatAmount(9007199254740991, 'USD'), '9007199254740991 minor (90071992547409.91 USD)')
})

test('a value that is not a safe integer or a currency code that is not one keeps its minor units and says ?', () => {
  assert.equal(formatAmount(20.5, 'USD'), '20.5 minor (? USD)')
  assert.equal(formatAmount(2000, 'usd'), '2000 minor (? usd)')
})
