// The four tools through their call() interface: argument errors (exact bytes), digest gateway cases, schemas.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import {
  createRatesTools,
  type GatedToolAnswer,
  HistorySource,
  openSource,
  type RatesSource,
  type RatesTool,
  RecordingsSource,
  SERVER_INSTRUCTIONS,
  SOURCE_ATTRIBUTION,
} from '../../src/rates/index.js'
import {
  CASSETTES,
  EASTER_2026,
  ECB,
  HISTORY_ZIP,
  LONG_AFTER,
  NO_CASSETTES,
  NO_HISTORY,
  sdmxCsv,
  tempDir,
  writeRecordings,
} from './support/shared.js'

const ajv = new Ajv2020({ strict: false })

function toolsOver(source: RatesSource, now = LONG_AFTER): Record<string, RatesTool> {
  return Object.fromEntries(createRatesTools({ source, now: () => now }).map((t) => [t.name, t]))
}

function ok(outcome: GatedToolAnswer): Record<string, unknown> {
  assert.equal(outcome.ok, true, outcome.text)
  return outcome.ok ? outcome.structuredContent : {}
}

function refused(outcome: GatedToolAnswer): string {
  assert.equal(outcome.ok, false, 'expected a refusal')
  return outcome.text
}

let fixture: { dir: string; cleanup: () => void }
let tools: Record<string, RatesTool>
before(async () => {
  fixture = tempDir()
  writeRecordings(fixture.dir, [
    {
      name: 'usd-eur-daily-easter-2026',
      url: `${ECB}/D.USD.EUR.SP00.A?format=csvdata&startPeriod=2026-03-30&endPeriod=2026-04-10`,
      status: 200,
      contentType: 'text/csv',
      body: sdmxCsv(EASTER_2026),
    },
  ])
  tools = toolsOver(await RecordingsSource.open(fixture.dir))
})
after(() => fixture.cleanup())

describe('the tool surface', () => {
  test('four tools, with their scopes and the digest descriptions', () => {
    assert.deepEqual(
      Object.values(tools).map((t) => [t.name, t.scope, t.description]),
      [
        ['rates.window', 'rates:read', 'Euro reference rates across a date window.'],
        ['calendar.why', 'rates:read', 'Why no rate was published on a given date.'],
        ['series.catalogue', 'series:list', 'Every series this server can reach. Most callers are not granted this.'],
        [
          'rates.convert',
          'rates:read',
          'Converts integer minor units between two currencies through the euro on one day, with that day’s certificates. Rounded once, half to even.',
        ],
      ],
    )
  })

  test('the instructions and attribution strings', () => {
    assert.equal(
      SERVER_INSTRUCTIONS,
      'Euro foreign exchange reference rates from the ECB Data Portal. Every answer carries a coverage certificate saying what it did not deliver and why. Source: ECB statistics.',
    )
    assert.equal(SOURCE_ATTRIBUTION, 'ECB statistics.')
  })

  test('every schema compiles', () => {
    for (const t of Object.values(tools)) {
      ajv.compile(t.inputSchema)
      ajv.compile(t.outputSchema)
    }
  })
})

describe('rates.window', () => {
  test('a huge argument is quoted by a short prefix and its length, never echoed at length', async () => {
    const huge = `'${'A'.repeat(900_000)}`
    const currency = refused(
      await tools['rates.window']!.call({ currency: huge, start: '2026-03-30', end: '2026-04-10' }),
    )
    assert.equal(
      currency,
      `currency must be a currency as three capital letters (ISO 4217); got "'${'A'.repeat(39)}…" (900001 characters)`,
    )
    const dates = refused(await tools['rates.window']!.call({ currency: 'USD', start: huge, end: '2026-04-10' }))
    assert.ok(dates.length < 200, dates.slice(0, 300))
    assert.match(
      dates,
      /^start and end must be dates as YYYY-MM-DD; got "'A{39}…" \(900001 characters\) and '2026-04-10'$/,
    )
    // A short value is still quoted whole, as the original does.
    assert.equal(
      refused(await tools['rates.window']!.call({ currency: 'usd', start: '2026-03-30', end: '2026-04-10' })),
      "currency must be a currency as three capital letters (ISO 4217); got 'usd'",
    )
  })

  test('the Easter window: observations as [date, number], the certificate, the source, valid against outputSchema', async () => {
    const result = ok(await tools['rates.window']!.call({ currency: 'USD', start: '2026-03-30', end: '2026-04-10' }))
    assert.deepEqual(Object.keys(result), ['observations', 'coverage', 'source'])
    assert.deepEqual(result.observations, [
      ['2026-03-30', 1.1484],
      ['2026-03-31', 1.1498],
      ['2026-04-01', 1.1605],
      ['2026-04-02', 1.1525],
      ['2026-04-07', 1.1557],
      ['2026-04-08', 1.1706],
      ['2026-04-09', 1.1685],
      ['2026-04-10', 1.1711],
    ])
    assert.equal(result.source, 'ECB statistics.')
    assert.equal(ajv.validate(tools['rates.window']!.outputSchema, result), true, ajv.errorsText())
  })

  test('observations are clipped to the window before the certificate', async () => {
    const result = ok(await tools['rates.window']!.call({ currency: 'USD', start: '2026-04-01', end: '2026-04-03' }))
    assert.deepEqual(result.observations, [
      ['2026-04-01', 1.1605],
      ['2026-04-02', 1.1525],
    ])
    assert.equal((result.coverage as { absent: { target_closed: number } }).absent.target_closed, 1)
  })

  test('the text copy is the structured content in the README layout', async () => {
    const outcome = await tools['rates.window']!.call({ currency: 'USD', start: '2026-04-01', end: '2026-04-02' })
    assert.ok(outcome.ok)
    assert.deepEqual(JSON.parse(outcome.text), outcome.structuredContent)
    assert.ok(
      outcome.text.startsWith(
        '{\n  "observations": [\n    ["2026-04-01", 1.1605],\n    ["2026-04-02", 1.1525]\n  ],\n',
      ),
    )
  })

  for (const [start, end] of [
    ['0000-00-00', '2026-04-10'],
    ['not-a-date', '2026-04-10'],
    ['', ''],
    ['20260401', '2026-04-10'],
    ['2026-02-29', '2026-03-01'],
  ]) {
    test(`dates ${JSON.stringify(start)} and ${JSON.stringify(end)} are refused, both quoted`, async () => {
      assert.equal(
        refused(await tools['rates.window']!.call({ currency: 'USD', start, end })),
        `start and end must be dates as YYYY-MM-DD; got '${start}' and '${end}'`,
      )
    })
  }

  test('a missing or non-string date reads as Python None / a number', async () => {
    assert.equal(
      refused(await tools['rates.window']!.call({ currency: 'USD', end: 20260410 })),
      'start and end must be dates as YYYY-MM-DD; got None and 20260410',
    )
  })

  test('a quote inside a date is echoed in Python repr style', async () => {
    assert.equal(
      refused(await tools['rates.window']!.call({ currency: 'USD', start: "it's", end: '2026-04-10' })),
      `start and end must be dates as YYYY-MM-DD; got "it's" and '2026-04-10'`,
    )
  })

  test('a currency that is not three capital letters is refused', async () => {
    assert.equal(
      refused(await tools['rates.window']!.call({ currency: 'usd', start: '2026-04-01', end: '2026-04-02' })),
      "currency must be a currency as three capital letters (ISO 4217); got 'usd'",
    )
    assert.equal(
      refused(await tools['rates.window']!.call({ start: '2026-04-01', end: '2026-04-02' })),
      'currency must be a currency as three capital letters (ISO 4217); got None',
    )
  })

  test('an unexpected argument is refused by name; non-object arguments are refused', async () => {
    assert.equal(
      refused(await tools['rates.window']!.call({ currency: 'USD', start: '2026-04-01', end: '2026-04-02', limit: 3 })),
      "rates.window takes currency, start, end, cassette; got an argument named 'limit'",
    )
    assert.equal(refused(await tools['rates.window']!.call([1])), 'rates.window takes an object of arguments')
  })

  test('a window that ends before it starts, and a window too wide, are refused before anything is fetched', async () => {
    assert.equal(
      refused(await tools['rates.window']!.call({ currency: 'USD', start: '2026-04-10', end: '2026-03-30' })),
      'window ends before it starts: 2026-04-10 to 2026-03-30',
    )
    assert.equal(
      refused(await tools['rates.window']!.call({ currency: 'USD', start: '0001-01-01', end: '9999-12-30' })),
      'a window of 3,652,058 days was asked for and 15,338 is the most this answers, which is the series from its first day to well past today. This is walked a day at a time, so the cost of answering is the width of the question',
    )
  })

  test('an unknown recording name is refused, and the names that exist are not listed', async () => {
    const text = refused(
      await tools['rates.window']!.call({ cassette: 'no-such', start: '2026-04-01', end: '2026-04-02' }),
    )
    assert.equal(text, "no recording named 'no-such'")
  })

  test('a named recording of another currency is refused rather than certified as this one', async () => {
    assert.equal(
      refused(
        await tools['rates.window']!.call({
          currency: 'GBP',
          cassette: 'usd-eur-daily-easter-2026',
          start: '2026-03-30',
          end: '2026-04-10',
        }),
      ),
      "the recording named 'usd-eur-daily-easter-2026' does not hold EXR.D.GBP.EUR.SP00.A",
    )
  })

  test('a window no recording covers is refused', async () => {
    assert.equal(
      refused(await tools['rates.window']!.call({ currency: 'GBP', start: '2026-04-01', end: '2026-04-02' })),
      'no recording covers EXR.D.GBP.EUR.SP00.A from 2026-04-01 to 2026-04-02',
    )
  })

  test('a corrupted recording is a machine fault: thrown, never a caller refusal', async () => {
    const t = tempDir()
    try {
      writeRecordings(t.dir, [
        {
          name: 'easter',
          url: `${ECB}/D.USD.EUR.SP00.A?format=csvdata&startPeriod=2026-03-30&endPeriod=2026-04-10`,
          status: 200,
          contentType: 'text/csv',
          body: sdmxCsv(EASTER_2026),
        },
      ])
      writeFileSync(join(t.dir, 'easter.body'), sdmxCsv(EASTER_2026).replace('1.1711', '1.1712'))
      const window = toolsOver(await RecordingsSource.open(t.dir))['rates.window']!
      await assert.rejects(window.call({ cassette: 'easter', start: '2026-03-30', end: '2026-04-10' }), {
        code: 'ERR_QUENCHZ_RECORDING_CORRUPTED',
      })
    } finally {
      t.cleanup()
    }
  })
})

describe('rates.window over a source that answers every window empty', () => {
  // A counting port: proves what is refused before the source is asked, and that the far end of the calendar works.
  let asked = 0
  const empty: RatesSource = {
    kind: 'recordings',
    async window() {
      asked++
      return { kind: 'empty_window', detail: 'no observation falls inside the window' }
    },
    async catalogue() {
      return []
    },
    async extent() {
      return null
    },
    async close() {},
  }
  const window = toolsOver(empty)['rates.window']!

  test('a reversed or too-wide window never reaches the source', async () => {
    asked = 0
    refused(await window.call({ currency: 'USD', start: '2026-04-10', end: '2026-03-30' }))
    refused(await window.call({ currency: 'USD', start: '0001-01-01', end: '9999-12-30' }))
    assert.equal(asked, 0)
  })

  test('9999-12-30 to 9999-12-31 is answered: 2 calendar days, both not yet published, no overflow', async () => {
    const coverage = ok(await window.call({ currency: 'USD', start: '9999-12-30', end: '9999-12-31' })).coverage as {
      requested_calendar_days: number
      absent: { not_yet_published: number }
      window_still_open: boolean
    }
    assert.equal(coverage.requested_calendar_days, 2)
    assert.equal(coverage.absent.not_yet_published, 2)
    assert.equal(coverage.window_still_open, true)
  })
})

describe('calendar.why', () => {
  const why = (day: unknown) => tools['calendar.why']!.call({ day })
  test('Good Friday 2026', async () => {
    assert.deepEqual(ok(await why('2026-04-03')), {
      date: '2026-04-03',
      closed_because: 'good-friday',
      source: 'ECB statistics.',
    })
  })
  test('an open day is null; no coverage block on this tool', async () => {
    const result = ok(await why('2026-04-07'))
    assert.deepEqual(result, { date: '2026-04-07', closed_because: null, source: 'ECB statistics.' })
    assert.equal('coverage' in result, false)
  })
  test('every day before 1999-01-04 is before_the_series, weekdays included', async () => {
    assert.equal(ok(await why('1999-01-01')).closed_because, 'before_the_series')
    assert.equal(ok(await why('1990-06-01')).closed_because, 'before_the_series')
    assert.equal(ok(await why('1999-01-04')).closed_because, null)
  })
  test('a bad day is refused with the value quoted', async () => {
    assert.equal(refused(await why('2026-13-45')), "day must be a date as YYYY-MM-DD; got '2026-13-45'")
  })
  test('the answer validates against its outputSchema', async () => {
    assert.equal(ajv.validate(tools['calendar.why']!.outputSchema, ok(await why('2026-12-26'))), true)
  })
})

describe('series.catalogue', () => {
  test('one series from the recordings, with the digest note', async () => {
    assert.deepEqual(ok(await tools['series.catalogue']!.call({})), {
      series: ['EXR.D.USD.EUR.SP00.A'],
      note: 'One series. The catalogue exists to be a tool most callers cannot see.',
      source: 'ECB statistics.',
    })
  })
  test('takes no arguments', async () => {
    assert.equal(
      refused(await tools['series.catalogue']!.call({ x: 1 })),
      "series.catalogue takes no arguments; got an argument named 'x'",
    )
  })
})

describe('rates.convert (small history fixture, runs everywhere)', () => {
  const history = HistorySource.fromText(
    [
      'Date,USD,JPY,CYP,',
      '2026-04-10,1.1711,186.43,N/A,',
      '2026-04-02,1.1525,184.02,N/A,',
      '2008-01-02,1.4717,163.85,N/A,',
      '2007-12-31,1.4721,164.93,0.585274,',
      '1999-01-04,1.1789,133.73,0.58231,',
      '',
    ].join('\n'),
  )
  const convert = (args: Record<string, unknown>) => toolsOver(history)['rates.convert']!.call(args)

  test('100.00 USD to JPY on 2026-04-10 through the euro: 15,919 yen, with both certificates', async () => {
    const result = ok(await convert({ amount_minor: 10000, from: 'USD', to: 'JPY', date: '2026-04-10' }))
    assert.equal(result.amount_minor, 15919)
    assert.deepEqual(result.from, {
      currency: 'USD',
      minor_unit_exponent: 2,
      rate_per_euro: '1.1711',
      amount_minor: 10000,
    })
    assert.deepEqual(result.to, { currency: 'JPY', minor_unit_exponent: 0, rate_per_euro: '186.43' })
    const coverage = result.coverage as {
      from: { delivered_observations: number }
      to: { delivered_observations: number }
    }
    assert.equal(coverage.from.delivered_observations, 1)
    assert.equal(coverage.to.delivered_observations, 1)
    assert.equal(ajv.validate(toolsOver(history)['rates.convert']!.outputSchema, result), true, ajv.errorsText())
  })

  test('EUR legs use exactly 1 and carry no certificate', async () => {
    const result = ok(await convert({ amount_minor: 10000, from: 'EUR', to: 'USD', date: '2026-04-10' }))
    assert.equal(result.amount_minor, 11711)
    assert.deepEqual(result.coverage, {
      from: null,
      to: (result.coverage as { to: unknown }).to,
    })
    assert.equal(
      ok(await convert({ amount_minor: 12345, from: 'EUR', to: 'EUR', date: '2026-04-10' })).amount_minor,
      12345,
    )
  })

  test('a closing day is refused with its reason; so is a day after an ended series', async () => {
    assert.equal(
      refused(await convert({ amount_minor: 100, from: 'USD', to: 'EUR', date: '2026-04-03' })),
      'no USD rate for 2026-04-03: TARGET was closed (good-friday)',
    )
    assert.equal(
      refused(await convert({ amount_minor: 100, from: 'CYP', to: 'EUR', date: '2008-01-02' })),
      'no CYP rate for 2008-01-02: the series had ended',
    )
    assert.equal(
      refused(await convert({ amount_minor: 100, from: 'EUR', to: 'USD', date: '2026-04-09' })),
      'no USD rate for 2026-04-09: the vendor has no rate for a day one was owed',
    )
  })

  test('argument errors', async () => {
    assert.equal(
      refused(await convert({ amount_minor: 1.5, from: 'USD', to: 'JPY', date: '2026-04-10' })),
      'amount_minor must be a whole number of minor units; got 1.5',
    )
    assert.equal(
      refused(await convert({ amount_minor: '100', from: 'USD', to: 'JPY', date: '2026-04-10' })),
      "amount_minor must be a whole number of minor units; got '100'",
    )
    assert.equal(
      refused(await convert({ amount_minor: 100, from: 'XAU', to: 'JPY', date: '2026-04-10' })),
      "XAU has no ISO 4217 minor unit in this server's table",
    )
    assert.equal(
      refused(await convert({ amount_minor: 100, from: 'USD', to: 'yen', date: '2026-04-10' })),
      "to must be a currency as three capital letters (ISO 4217); got 'yen'",
    )
    assert.equal(
      refused(await convert({ amount_minor: 100, from: 'USD', to: 'JPY', date: '10/04/2026' })),
      "date must be a date as YYYY-MM-DD; got '10/04/2026'",
    )
  })

  test('a result beyond the safe integer range is refused, not rounded by a float', async () => {
    assert.equal(
      refused(await convert({ amount_minor: Number.MAX_SAFE_INTEGER, from: 'USD', to: 'JPY', date: '1999-01-04' })),
      'the converted amount exceeds 9,007,199,254,740,991 minor units',
    )
  })
})

describe('the digest gateway cases over the shared cassettes', { skip: NO_CASSETTES }, () => {
  let shared: Record<string, RatesTool>
  before(async () => {
    shared = toolsOver(await openSource({ kind: 'recordings', dir: CASSETTES as string }))
  })
  test('one-month cassette, window 2026-06-01 to 07-31: the series start never comes from the slice', async () => {
    const result = ok(
      await shared['rates.window']!.call({
        cassette: 'usd-eur-daily-one-month',
        start: '2026-06-01',
        end: '2026-07-31',
      }),
    )
    const c = result.coverage as {
      absent: Record<string, number>
      delivered_observations: number
      expected_observations: number
    }
    assert.equal(c.absent.before_the_series, 0)
    assert.equal(c.absent.no_such_observation, 22)
    assert.equal(c.delivered_observations, 23)
    assert.ok(c.delivered_observations < c.expected_observations)
  })
  test('the XML cassette and the unknown series are refused with their own messages', async () => {
    assert.equal(
      refused(
        await shared['rates.window']!.call({
          cassette: 'format-that-does-not-exist',
          start: '2026-07-01',
          end: '2026-07-31',
        }),
      ),
      'the vendor did not answer in the format asked for: asked for csvdata and received XML at status 200, 7563 bytes',
    )
    assert.match(
      refused(await shared['rates.window']!.call({ currency: 'ZZZ', start: '2026-07-01', end: '2026-07-31' })),
      /^the vendor has no such series: No Series was returned for the query: /,
    )
  })
  test('the weekend cassette: answered, delivered_from null, two closures', async () => {
    const result = ok(
      await shared['rates.window']!.call({
        cassette: 'usd-eur-daily-one-weekend',
        start: '2026-08-22',
        end: '2026-08-23',
      }),
    )
    assert.deepEqual(result.observations, [])
    assert.equal((result.coverage as { delivered_from: unknown }).delivered_from, null)
  })
  test('the full-history recording is listed but absent here: a machine fault, not a caller refusal', async () => {
    await assert.rejects(
      shared['rates.window']!.call({ cassette: 'usd-eur-daily-full-history', start: '2026-04-01', end: '2026-04-03' }),
      { code: 'ERR_QUENCHZ_RECORDING_ABSENT' },
    )
  })
})

describe('the digest gateway cases over the full history', { skip: NO_HISTORY }, () => {
  let full: Record<string, RatesTool>
  before(async () => {
    full = toolsOver(await openSource({ kind: 'history', file: HISTORY_ZIP as string }))
  })
  test('2026-04-01 to 04-03: observations exactly 04-01 and 04-02, Good Friday closed', async () => {
    const result = ok(await full['rates.window']!.call({ currency: 'USD', start: '2026-04-01', end: '2026-04-03' }))
    assert.deepEqual(
      (result.observations as Array<[string, number]>).map(([d]) => d),
      ['2026-04-01', '2026-04-02'],
    )
    assert.equal((result.coverage as { absent: { target_closed: number } }).absent.target_closed, 1)
  })
  test('1990: expected 0, no gaps, before_the_series 365', async () => {
    const c = ok(await full['rates.window']!.call({ currency: 'USD', start: '1990-01-01', end: '1990-12-31' }))
      .coverage as {
      expected_observations: number
      absent: Record<string, number>
    }
    assert.equal(c.expected_observations, 0)
    assert.equal(c.absent.no_such_observation, 0)
    assert.equal(c.absent.before_the_series, 365)
  })
  test('a currency that started later: days before its first rate are before_the_series (ILS from 2011-01-03)', async () => {
    const c = ok(await full['rates.window']!.call({ currency: 'ILS', start: '2010-12-27', end: '2011-01-07' }))
      .coverage as {
      absent: Record<string, number>
      delivered_observations: number
    }
    assert.equal(c.absent.before_the_series, 7)
    assert.equal(c.delivered_observations, 5)
  })
  test('RUB, suspended since 2022-03-02, has not ended: its later open days are genuine gaps', async () => {
    const c = ok(await full['rates.window']!.call({ currency: 'RUB', start: '2022-02-28', end: '2022-03-31' }))
      .coverage as {
      absent: Record<string, number>
      expected_observations: number
    }
    assert.deepEqual(c.absent, {
      target_closed: 8,
      not_yet_published: 0,
      no_such_observation: 22,
      before_the_series: 0,
    })
    assert.equal(c.expected_observations, 24)
  })
  test('HRK, replaced by the euro on 2023-01-01, has ended: later days are after_the_series', async () => {
    const c = ok(await full['rates.window']!.call({ currency: 'HRK', start: '2022-12-28', end: '2023-01-03' }))
      .coverage as { absent: Record<string, number>; expected_observations: number }
    assert.equal(c.absent.after_the_series, 4)
    assert.equal(c.absent.no_such_observation, 0)
    assert.equal(c.expected_observations, 3)
  })
  test('a running series cannot be certified past the file’s last day: refused, not reported as gaps', async () => {
    assert.equal(
      refused(await full['rates.window']!.call({ currency: 'USD', start: '2026-04-01', end: '2026-04-20' })),
      "this source's data ends on 2026-04-13 and cannot account for later days; the window runs to 2026-04-20",
    )
    assert.equal(
      refused(await full['rates.convert']!.call({ amount_minor: 100, from: 'USD', to: 'EUR', date: '2026-04-14' })),
      "this source's data ends on 2026-04-13 and cannot account for later days; the window runs to 2026-04-14",
    )
    // A silent series is refused past the file's end like a running one: the file cannot say the silence went on.
    assert.equal(
      refused(await full['rates.window']!.call({ currency: 'RUB', start: '2026-04-01', end: '2026-04-20' })),
      "this source's data ends on 2026-04-13 and cannot account for later days; the window runs to 2026-04-20",
    )
    // An ended series is accounted for by after_the_series, whatever the file's end.
    assert.equal(
      ok(await full['rates.window']!.call({ currency: 'CYP', start: '2026-04-01', end: '2026-04-20' })).source,
      'ECB statistics.',
    )
  })

  test('the catalogue lists all 41 series', async () => {
    const result = ok(await full['series.catalogue']!.call({}))
    assert.equal((result.series as string[]).length, 41)
    assert.equal(result.note, '41 series. The catalogue exists to be a tool most callers cannot see.')
  })
  test('the structural rule: any answer with observations carries coverage, every answer carries the source', async () => {
    const answers = [
      await full['rates.window']!.call({ currency: 'GBP', start: '2020-01-01', end: '2020-01-31' }),
      await full['calendar.why']!.call({ day: '2020-01-01' }),
      await full['series.catalogue']!.call({}),
      await full['rates.convert']!.call({ amount_minor: 100, from: 'GBP', to: 'USD', date: '2020-01-02' }),
    ]
    for (const a of answers) {
      const result = ok(a)
      assert.equal(result.source, 'ECB statistics.')
      if ('observations' in result) assert.ok('coverage' in result)
    }
  })
})

describe('settled answers are built once', () => {
  const history = HistorySource.fromText('Date,USD,\n2026-04-10,1.1711,\n2026-04-09,1.1685,\n')
  let clock = new Date('2026-05-01T08:00:00Z')
  const windowTool = createRatesTools({ source: history, now: () => clock }).find((t) => t.name === 'rates.window')!
  const ask = () => windowTool.call({ currency: 'USD', start: '2026-04-09', end: '2026-04-10' })
  const completed = (o: GatedToolAnswer) => (ok(o).coverage as { body_completed_at: string }).body_completed_at

  test('a window inside the dated file, every day due: the same answer object, stamped when it was built', async () => {
    const first = await ask()
    clock = new Date('2026-05-02T08:00:00Z')
    const again = await ask()
    assert.equal(again, first, 'served from the cache, not rebuilt')
    assert.equal(completed(again), '2026-05-01T08:00:00Z')
    // A clock reading earlier than the build is answered afresh, never with a body completed in its future.
    clock = new Date('2026-04-30T08:00:00Z')
    const earlier = await ask()
    assert.notEqual(earlier, first)
    assert.equal(completed(earlier), '2026-04-30T08:00:00Z')
  })

  test('a window whose last day is not yet due is rebuilt on every call', async () => {
    clock = new Date('2026-04-10T12:00:00Z') // 14:00 Frankfurt: 2026-04-10 is not due until 17:00
    const first = await ask()
    const again = await ask()
    assert.notEqual(again, first)
    assert.deepEqual(again, first)
  })

  test('a refusal (a window past the end of the file) is never cached', async () => {
    clock = new Date('2026-05-03T08:00:00Z')
    const a = await windowTool.call({ currency: 'USD', start: '2026-04-09', end: '2026-04-20' })
    const b = await windowTool.call({ currency: 'USD', start: '2026-04-09', end: '2026-04-20' })
    assert.equal(a.ok, false)
    assert.notEqual(a, b)
  })
})
