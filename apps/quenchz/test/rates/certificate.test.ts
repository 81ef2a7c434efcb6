// The coverage certificate: every number of the digest's §5.4 table, as literals, plus guards and the fifth reason.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildCertificate, type Certificate, isComplete, parseIsoDay } from '../../src/rates/index.js'
import { EASTER_2026, LONG_AFTER } from './support/shared.js'

const day = (iso: string) => parseIsoDay(iso) as number
const START = day('1999-01-04')

function certify(
  from: string,
  to: string,
  delivered: string[],
  now: Date = LONG_AFTER,
  seriesStart = START,
  seriesEnd: number | null = null,
): Certificate {
  const result = buildCertificate({
    from: day(from),
    to: day(to),
    delivered: delivered.map(day),
    now,
    seriesStart,
    seriesEnd,
  })
  if (!result.ok) throw new Error(result.message)
  return result.certificate
}

function refusal(from: string, to: string, delivered: string[] = []): string {
  const result = buildCertificate({
    from: day(from),
    to: day(to),
    delivered: delivered.map(day),
    now: LONG_AFTER,
    seriesStart: START,
  })
  assert.equal(result.ok, false)
  return result.ok ? '' : result.message
}

const easterDates = EASTER_2026.map(([d]) => d)

describe('the digest §5.4 numbers', () => {
  test('Easter 2026 window: 12 days, 8 delivered, 8 expected, 4 closed, complete', () => {
    const c = certify('2026-03-30', '2026-04-10', easterDates)
    assert.deepEqual(c, {
      requested_from: '2026-03-30',
      requested_to: '2026-04-10',
      requested_calendar_days: 12,
      expected_observations: 8,
      delivered_observations: 8,
      delivered_from: '2026-03-30',
      delivered_to: '2026-04-10',
      absent: { target_closed: 4, not_yet_published: 0, no_such_observation: 0, before_the_series: 0 },
      window_still_open: false,
      body_completed_at: '2026-08-26T12:00:00Z',
      source: 'ECB statistics.',
    })
    assert.equal(isComplete(c), true)
  })

  test('fields serialise in the digest order, and absent holds its four keys in order', () => {
    const c = certify('2026-03-30', '2026-04-10', easterDates)
    assert.deepEqual(Object.keys(c), [
      'requested_from',
      'requested_to',
      'requested_calendar_days',
      'expected_observations',
      'delivered_observations',
      'delivered_from',
      'delivered_to',
      'absent',
      'window_still_open',
      'body_completed_at',
      'source',
    ])
    assert.deepEqual(Object.keys(c.absent), [
      'target_closed',
      'not_yet_published',
      'no_such_observation',
      'before_the_series',
    ])
  })

  test('the same window with 2026-04-08 removed: one genuine gap, not complete, not open', () => {
    const c = certify(
      '2026-03-30',
      '2026-04-10',
      easterDates.filter((d) => d !== '2026-04-08'),
    )
    assert.equal(c.absent.no_such_observation, 1)
    assert.equal(c.expected_observations, 8)
    assert.equal(c.delivered_observations, 7)
    assert.equal(isComplete(c), false)
    assert.equal(c.window_still_open, false)
  })

  test('a weekend with an empty body: nothing delivered, two closures, complete', () => {
    const c = certify('2026-08-22', '2026-08-23', [])
    assert.equal(c.delivered_observations, 0)
    assert.equal(c.delivered_from, null)
    assert.equal(c.delivered_to, null)
    assert.equal(c.absent.target_closed, 2)
    assert.equal(isComplete(c), true)
  })

  const monday = '2026-08-24'
  for (const [local, utc, nyp, gap] of [
    ['14:30', '2026-08-24T12:30:00Z', 1, 0],
    ['15:00', '2026-08-24T13:00:00Z', 1, 0],
    ['16:30', '2026-08-24T14:30:00Z', 1, 0],
    ['17:00:00', '2026-08-24T15:00:00Z', 0, 1],
    ['17:01', '2026-08-24T15:01:00Z', 0, 1],
    ['17:30', '2026-08-24T15:30:00Z', 0, 1],
  ] as const) {
    test(`Monday ${monday} with nothing delivered at ${local} Frankfurt: not_yet_published ${nyp}, no_such_observation ${gap}`, () => {
      const c = certify(monday, monday, [], new Date(utc))
      assert.equal(c.absent.not_yet_published, nyp)
      assert.equal(c.absent.no_such_observation, gap)
      assert.equal(c.window_still_open, nyp === 1)
      assert.equal(c.expected_observations, 1)
    })
  }

  test('the 1990 window with the series start: expected 0, before_the_series 365, complete', () => {
    const c = certify('1990-01-01', '1990-12-31', [])
    assert.equal(c.requested_calendar_days, 365)
    assert.equal(c.expected_observations, 0)
    assert.deepEqual(c.absent, {
      target_closed: 0,
      not_yet_published: 0,
      no_such_observation: 0,
      before_the_series: 365,
    })
    assert.equal(c.delivered_from, null)
    assert.equal(c.window_still_open, false)
    assert.equal(isComplete(c), true)
  })

  test('the 1990 window without a series start (the original defect): 261 confident gaps', () => {
    const c = certify('1990-01-01', '1990-12-31', [], LONG_AFTER, day('0001-01-01'))
    assert.equal(c.expected_observations, 261)
    assert.equal(c.absent.no_such_observation, 261)
    assert.equal(c.absent.target_closed, 104)
    assert.equal(c.absent.before_the_series, 0)
  })

  test('1998-12-01 to 1999-02-01 with nothing delivered: 34 before, 21 owed and missing, 8 closed', () => {
    const c = certify('1998-12-01', '1999-02-01', [])
    assert.equal(c.absent.before_the_series, 34)
    assert.equal(c.expected_observations, 21)
    assert.equal(c.absent.no_such_observation, 21)
    assert.equal(c.absent.target_closed, 8)
  })

  test('0001-01-01 to 9999-12-30 (3,652,058 days) is refused with the exact message', () => {
    assert.equal(
      refusal('0001-01-01', '9999-12-30'),
      'a window of 3,652,058 days was asked for and 15,338 is the most this answers, which is the series from its first day to well past today. This is walked a day at a time, so the cost of answering is the width of the question',
    )
  })

  test('1999-01-04 to 2035-12-31 (13,511 days) is answered; an earlier limit of 13,500 wrongly refused it', () => {
    assert.equal(certify('1999-01-04', '2035-12-31', []).requested_calendar_days, 13_511)
  })

  test('the cap is exactly 15,338 days: 1999-01-04 to 2040-12-31 answers, one more day is refused', () => {
    assert.equal(certify('1999-01-04', '2040-12-31', []).requested_calendar_days, 15_338)
    assert.match(refusal('1999-01-03', '2040-12-31'), /^a window of 15,339 days was asked for/)
  })

  test('9999-12-30 to 9999-12-31 is answered, 2 calendar days, no overflow', () => {
    const c = certify('9999-12-30', '9999-12-31', [])
    assert.equal(c.requested_calendar_days, 2)
    assert.equal(c.requested_to, '9999-12-31')
    assert.equal(c.absent.not_yet_published, 2)
  })

  test('an August 2026 window with one delivered day: 31 calendar days, delivered 1', () => {
    const c = certify('2026-08-01', '2026-08-31', ['2026-08-03'])
    assert.equal(c.requested_calendar_days, 31)
    assert.equal(c.delivered_observations, 1)
    assert.equal(c.delivered_from, '2026-08-03')
  })
})

describe('the walk order and guards', () => {
  test('a delivered rate on a calendar closure counts as expected and delivered', () => {
    const c = certify('2026-04-03', '2026-04-03', ['2026-04-03'])
    assert.equal(c.expected_observations, 1)
    assert.equal(c.absent.target_closed, 0)
  })

  test('a window that ends before it starts is refused, naming both dates', () => {
    assert.equal(refusal('2026-04-10', '2026-03-30'), 'window ends before it starts: 2026-04-10 to 2026-03-30')
  })

  test('delivered dates outside the window are refused rather than clipped', () => {
    assert.equal(
      refusal('2026-04-01', '2026-04-02', ['2026-03-31', '2026-04-01', '2026-04-07']),
      '2 delivered dates fall outside the window this certificate is about, the first being 2026-03-31. Clip before asking, because a certificate counting observations it did not examine describes a different window from the one it names',
    )
  })

  test('window order is checked before strays, strays before width', () => {
    assert.match(refusal('2026-04-02', '2026-04-01', ['2026-05-01']), /^window ends before it starts/)
    assert.match(refusal('0001-01-01', '9999-12-30', ['0001-01-01']), /^a window of/)
  })

  test('body_completed_at keeps fractional seconds of a live clock', () => {
    assert.equal(
      certify('2026-08-22', '2026-08-22', [], new Date('2026-08-26T12:00:00.123Z')).body_completed_at,
      '2026-08-26T12:00:00.123Z',
    )
  })

  test('duplicated delivered dates count once', () => {
    assert.equal(certify('2026-04-01', '2026-04-02', ['2026-04-01', '2026-04-01']).delivered_observations, 1)
  })
})

describe('the fifth reason: after_the_series, for a series that ended', () => {
  test('days after the last published rate are after_the_series, weekends included, and not owed', () => {
    // CYP's last rate was 2007-12-31 (Cyprus joined the euro on 2008-01-01).
    const c = certify('2007-12-28', '2008-01-10', ['2007-12-28', '2007-12-31'], LONG_AFTER, START, day('2007-12-31'))
    assert.deepEqual(c.absent, {
      target_closed: 2,
      not_yet_published: 0,
      no_such_observation: 0,
      before_the_series: 0,
      after_the_series: 10,
    })
    assert.equal(c.expected_observations, 2)
    assert.equal(isComplete(c), true)
  })

  test('the key is absent while a series runs: a zero would claim it could apply', () => {
    assert.equal('after_the_series' in certify('2026-04-01', '2026-04-01', []).absent, false)
    assert.equal(
      certify('2007-12-03', '2007-12-04', [], LONG_AFTER, START, day('2007-12-31')).absent.after_the_series,
      0,
    )
  })
})
