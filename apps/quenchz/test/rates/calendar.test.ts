// The TARGET closing calendar (digest §6): first match wins, Easter by the anonymous Gregorian algorithm.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { closingReason, easterSunday, parseIsoDay } from '../../src/rates/index.js'

const reason = (iso: string) => closingReason(parseIsoDay(iso) as number)

describe('Easter Sunday', () => {
  for (const [year, expected] of [
    [2000, '2000-04-23'],
    [2012, '2012-04-08'],
    [2024, '2024-03-31'],
    [2025, '2025-04-20'],
    [2026, '2026-04-05'],
    [2038, '2038-04-25'],
  ] as const) {
    test(`falls on ${expected}`, () => {
      const e = easterSunday(year)
      assert.equal(`${year}-${String(e.month).padStart(2, '0')}-${String(e.day).padStart(2, '0')}`, expected)
    })
  }
})

describe('closing reasons', () => {
  test('Easter 2026: Good Friday 04-03, the weekend, Easter Monday 04-06, open either side', () => {
    assert.equal(reason('2026-04-02'), null)
    assert.equal(reason('2026-04-03'), 'good-friday')
    assert.equal(reason('2026-04-04'), 'weekend')
    assert.equal(reason('2026-04-05'), 'weekend')
    assert.equal(reason('2026-04-06'), 'easter-monday')
    assert.equal(reason('2026-04-07'), null)
  })

  test('the fixed annual holidays from 2000', () => {
    assert.equal(reason('2025-01-01'), 'new-years-day')
    assert.equal(reason('2025-05-01'), 'labour-day')
    assert.equal(reason('2025-12-25'), 'christmas-day')
    assert.equal(reason('2025-12-26'), '26-december')
    assert.equal(reason('2000-05-01'), 'labour-day')
  })

  test('weekend wins over a holiday name: 26 December 2026 is a Saturday', () => {
    assert.equal(reason('2026-12-26'), 'weekend')
    assert.equal(reason('2027-01-01'), 'new-years-day')
  })

  test('the two special closures, which no annual rule produces', () => {
    assert.equal(reason('1999-12-31'), 'special-closure')
    assert.equal(reason('2001-12-31'), 'special-closure')
    assert.equal(reason('2002-12-31'), null)
    assert.equal(reason('2000-12-29'), null)
  })

  test('1999 ran on national calendars: Good Friday and Easter Monday 1999 owe a rate', () => {
    assert.equal(reason('1999-04-02'), null)
    assert.equal(reason('1999-04-05'), null)
    assert.equal(reason('1999-05-03'), null)
    assert.equal(reason('1999-12-24'), null)
    assert.equal(reason('1999-01-02'), 'weekend')
  })

  test('works at both ends of the date range without overflow', () => {
    assert.equal(reason('9999-12-31'), null) // a Friday
    assert.equal(reason('9999-12-25'), 'weekend') // a Saturday
    assert.equal(reason('0001-01-01'), null) // a Monday
  })
})
