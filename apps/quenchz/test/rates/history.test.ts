// The eurofxref-hist source: zip and csv reading, all currencies, ended series, and the calendar proved against it.
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { closingReason, formatDay, HistorySource, openSource, parseIsoDay } from '../../src/rates/index.js'
import { readHistory, unzipCsv } from '../../src/rates/sources/history.js'
import { HISTORY_ZIP, NO_HISTORY, tempDir } from './support/shared.js'

const day = (iso: string) => parseIsoDay(iso) as number

// Figures from the ECB data README: 2026-04-10 USD 1.1711; 1999-01-04 USD 1.1789 (rows newest first, N/A, trailing comma).
const SMALL = [
  'Date,USD,JPY,CYP,',
  '2026-04-10,1.1711,186.43,N/A,',
  '2026-04-09,1.1685,185.9,N/A,',
  '2007-12-31,1.4721,164.93,0.585274,',
  '1999-01-04,1.1789,133.73,0.58231,',
  '',
].join('\n')

describe('reading a history file (small fixture, runs everywhere)', () => {
  const source = HistorySource.fromText(SMALL)
  test('every column is a series; N/A is no observation', async () => {
    assert.deepEqual(await source.catalogue(), ['EXR.D.CYP.EUR.SP00.A', 'EXR.D.JPY.EUR.SP00.A', 'EXR.D.USD.EUR.SP00.A'])
    const outcome = await source.window({ currency: 'CYP', from: day('2007-12-31'), to: day('2026-04-10') }, new Date())
    assert.equal(outcome.kind, 'observations')
    assert.deepEqual(outcome.kind === 'observations' && outcome.observations.map((o) => [o.date, o.lexeme]), [
      ['2007-12-31', '0.585274'],
    ])
  })
  test('a window without rows is an empty window; an absent currency is an unknown series', async () => {
    assert.equal(
      (await source.window({ currency: 'USD', from: day('2026-04-11'), to: day('2026-04-12') }, new Date())).kind,
      'empty_window',
    )
    assert.deepEqual(await source.window({ currency: 'ZZZ', from: 0, to: 1 }, new Date()), {
      kind: 'unknown_series',
      detail: 'EXR.D.ZZZ.EUR.SP00.A is not among the 3 series of the history file',
    })
  })
  test('a column that stops before the file ends is an ended series; one that runs to the end is not', async () => {
    assert.deepEqual(await source.extent('CYP'), {
      first: day('1999-01-04'),
      last: day('2007-12-31'),
      ended: true,
      coveredUntil: day('2026-04-10'),
    })
    assert.deepEqual(await source.extent('USD'), {
      first: day('1999-01-04'),
      last: day('2026-04-10'),
      ended: false,
      coveredUntil: day('2026-04-10'),
    })
    assert.equal(await source.extent('ZZZ'), null)
  })
  test('a file that is not eurofxref-hist is refused with a stable code', () => {
    assert.throws(() => HistorySource.fromText('KEY,VALUE\n1,2\n'), { code: 'ERR_QUENCHZ_HISTORY_FORMAT' })
    assert.throws(() => HistorySource.fromText('Date,USD\n2026-04-10,one\n'), { code: 'ERR_QUENCHZ_HISTORY_FORMAT' })
  })
})

describe('the ECB eurofxref-hist.zip', { skip: NO_HISTORY }, () => {
  let source: HistorySource
  before(async () => {
    source = (await openSource({ kind: 'history', file: HISTORY_ZIP as string })) as HistorySource
  })

  test('6,983 rows from 1999-01-04 to 2026-04-13, 41 currencies', async () => {
    assert.equal(source.history.rows, 6983)
    assert.equal(formatDay(source.history.lastDay), '2026-04-13')
    assert.equal((await source.catalogue()).length, 41)
  })

  test('the README spot checks: 2026-04-10 USD 1.1711, 1999-01-04 USD 1.1789', async () => {
    const a = await source.window({ currency: 'USD', from: day('2026-04-10'), to: day('2026-04-10') }, new Date())
    const b = await source.window({ currency: 'USD', from: day('1999-01-04'), to: day('1999-01-04') }, new Date())
    assert.equal(a.kind === 'observations' && a.observations[0]?.lexeme, '1.1711')
    assert.equal(b.kind === 'observations' && b.observations[0]?.lexeme, '1.1789')
  })

  test('the Easter 2026 window holds the same eight USD rates as the recording', async () => {
    const outcome = await source.window({ currency: 'USD', from: day('2026-03-30'), to: day('2026-04-10') }, new Date())
    assert.deepEqual(
      outcome.kind === 'observations' && outcome.observations.map((o) => o.value),
      [1.1484, 1.1498, 1.1605, 1.1525, 1.1557, 1.1706, 1.1685, 1.1711],
    )
  })

  test('the unzipped csv reads the same as the zip', async () => {
    const t = tempDir()
    try {
      const csv = join(t.dir, 'eurofxref-hist.csv')
      writeFileSync(csv, await unzipCsv(readFileSync(HISTORY_ZIP as string)))
      const fromCsv = await readHistory(csv)
      assert.equal(fromCsv.rows, 6983)
      assert.deepEqual(fromCsv.columns.get('RUB'), source.history.columns.get('RUB'))
    } finally {
      t.cleanup()
    }
  })

  test('a series that fell silent has not ended: RUB stops on 2022-03-01 but its currency exists', async () => {
    const rub = await source.extent('RUB')
    assert.equal(rub?.ended, false)
    assert.equal(rub && formatDay(rub.last), '2022-03-01')
  })

  test('ended series (replaced or abolished currencies) and their last published rates, from the whole file', async () => {
    const ended: Record<string, string> = {}
    for (const key of await source.catalogue()) {
      const currency = key.split('.')[2] as string
      const extent = await source.extent(currency)
      if (extent?.ended) ended[currency] = formatDay(extent.last)
    }
    assert.deepEqual(ended, {
      BGN: '2025-12-31',
      CYP: '2007-12-31',
      EEK: '2010-12-31',
      HRK: '2022-12-30',
      LTL: '2014-12-31',
      LVL: '2013-12-31',
      MTL: '2007-12-31',
      ROL: '2005-06-30',
      SIT: '2006-12-29',
      SKK: '2008-12-31',
      TRL: '2004-12-31',
    })
  })
})

describe('the calendar proved against the whole history', { skip: NO_HISTORY }, () => {
  let source: HistorySource
  before(async () => {
    source = (await openSource({ kind: 'history', file: HISTORY_ZIP as string })) as HistorySource
  })
  after(async () => source?.close())

  test('every weekday without any row has a closing reason, and no row falls on a closing day', () => {
    const rowDays = new Set<number>()
    for (const column of source.history.columns.values()) for (const d of column.days) rowDays.add(d)
    const unexplained: string[] = []
    const overreach: string[] = []
    for (let d = day('1999-01-04'); d <= source.history.lastDay; d++) {
      const reason = closingReason(d)
      if (!rowDays.has(d) && reason === null) unexplained.push(formatDay(d))
      if (rowDays.has(d) && reason !== null) overreach.push(formatDay(d))
    }
    assert.deepEqual(unexplained, [])
    assert.deepEqual(overreach, [])
    assert.equal(rowDays.size, 6983)
  })

  test('per currency, between its first and last rate: the only unexplained days are ISK’s 2008–2018 suspension', () => {
    const exceptions: Record<string, { count: number; first: string; last: string }> = {}
    for (const [currency, column] of source.history.columns) {
      const has = new Set(column.days)
      const missing: number[] = []
      const first = column.days[0] as number
      const last = column.days.at(-1) as number
      for (let d = first; d <= last; d++) {
        const reason = closingReason(d)
        assert.ok(!(has.has(d) && reason !== null), `${currency} has a rate on closing day ${formatDay(d)}`)
        if (!has.has(d) && reason === null) missing.push(d)
      }
      if (missing.length > 0) {
        exceptions[currency] = {
          count: missing.length,
          first: formatDay(missing[0] as number),
          last: formatDay(missing.at(-1) as number),
        }
      }
    }
    // ISK was not quoted from 2008-12-10 until 2018-02-01; the certificate reports those days as no_such_observation.
    assert.deepEqual(exceptions, { ISK: { count: 2341, first: '2008-12-10', last: '2018-01-31' } })
  })

  test('weekend days without a row: 2,846 in the file; 2,884 over the digest span to 2026-08-25; Easter closures 54', () => {
    const rowDays = new Set<number>()
    for (const column of source.history.columns.values()) for (const d of column.days) rowDays.add(d)
    const count = (to: number, reasons: string[]) => {
      let n = 0
      for (let d = day('1999-01-04'); d <= to; d++) {
        const reason = closingReason(d)
        if (reason !== null && reasons.includes(reason) && !rowDays.has(d)) n++
      }
      return n
    }
    assert.equal(count(source.history.lastDay, ['weekend']), 2846)
    assert.equal(count(day('2026-08-25'), ['weekend']), 2884)
    assert.equal(count(day('2026-08-25'), ['good-friday']), 27)
    assert.equal(count(day('2026-08-25'), ['easter-monday']), 27)
  })
})
