// The publication threshold: 16:00 Europe/Berlin plus one hour of grace, i.e. 17:00 Frankfurt local time.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { overdueAtMs, parseIsoDay } from '../../src/rates/index.js'

const due = (iso: string) => new Date(overdueAtMs(parseIsoDay(iso) as number)).toISOString()

describe('a day becomes overdue at 17:00 Frankfurt', () => {
  test('15:00 UTC in summer (CEST)', () => {
    assert.equal(due('2026-08-24'), '2026-08-24T15:00:00.000Z')
  })
  test('16:00 UTC in winter (CET)', () => {
    assert.equal(due('2026-01-15'), '2026-01-15T16:00:00.000Z')
  })
  test('on the switch Sundays 17:00 local is already on the new offset', () => {
    assert.equal(due('2026-03-29'), '2026-03-29T15:00:00.000Z')
    assert.equal(due('2026-03-28'), '2026-03-28T16:00:00.000Z')
    assert.equal(due('2026-10-25'), '2026-10-25T16:00:00.000Z')
    assert.equal(due('2026-10-24'), '2026-10-24T15:00:00.000Z')
  })
  test('agrees with the platform time-zone database for every day of 1950-2060', () => {
    const fmt = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', hourCycle: 'h23' })
    // From 1950: no summer time until 1980, 1980-1995 ending in September, the EU rule from 1996.
    const from = parseIsoDay('1950-01-01') as number
    const to = parseIsoDay('2060-12-31') as number
    let mismatches = 0
    for (let d = from; d <= to; d++) {
      if (fmt.format(new Date(overdueAtMs(d))) !== '17') mismatches++
    }
    assert.equal(mismatches, 0)
  })
  test('a far-future day still has a threshold (no overflow at 9999-12-31)', () => {
    assert.equal(due('9999-12-31'), '9999-12-31T16:00:00.000Z')
  })
})
