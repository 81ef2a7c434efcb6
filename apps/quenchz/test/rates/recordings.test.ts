// The recordings source: index.json lookups, length-then-hash verification on first use, verified bytes cached,
// listed-but-absent bodies reported as absent (not modified), request matching by series and period.
import assert from 'node:assert/strict'
import { chmodSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, test } from 'node:test'
import { openSource, parseIsoDay, type RatesError, RecordingsSource } from '../../src/rates/index.js'
import { CASSETTES, EASTER_2026, ECB, NO_CASSETTES, sdmxCsv, tempDir, writeRecordings } from './support/shared.js'

const day = (iso: string) => parseIsoDay(iso) as number
let cleanups: Array<() => void> = []
afterEach(() => {
  for (const c of cleanups) c()
  cleanups = []
})
function temp(): string {
  const t = tempDir()
  cleanups.push(t.cleanup)
  return t.dir
}

function fixtureDir(): string {
  const dir = temp()
  writeRecordings(dir, [
    {
      name: 'usd-eur-daily-easter-2026',
      url: `${ECB}/D.USD.EUR.SP00.A?format=csvdata&startPeriod=2026-03-30&endPeriod=2026-04-10`,
      status: 200,
      contentType: 'text/csv',
      body: sdmxCsv(EASTER_2026),
    },
    {
      name: 'usd-eur-daily-one-week',
      url: `${ECB}/D.USD.EUR.SP00.A?format=csvdata&startPeriod=2026-04-06&endPeriod=2026-04-10`,
      status: 200,
      contentType: 'text/csv',
      body: sdmxCsv(EASTER_2026.slice(4)),
    },
  ])
  return dir
}

describe('verification on first use (fixture, runs everywhere)', () => {
  test('a body cut short is a corrupted recording, with both byte counts', async () => {
    const dir = fixtureDir()
    const path = join(dir, 'usd-eur-daily-easter-2026.body')
    const full = readFileSync(path)
    writeFileSync(path, full.subarray(0, full.length - 155))
    const source = await RecordingsSource.open(dir)
    await assert.rejects(source.body('usd-eur-daily-easter-2026'), {
      code: 'ERR_QUENCHZ_RECORDING_CORRUPTED',
      message: `usd-eur-daily-easter-2026.body holds ${(full.length - 155).toLocaleString('en-US')} bytes and ${full.length.toLocaleString('en-US')} were recorded. This is a local file, so the likely cause is an interrupted write or an unfinished sync rather than an edit`,
    })
  })

  test('a body of the right length with a changed byte names both hash prefixes', async () => {
    const dir = fixtureDir()
    const path = join(dir, 'usd-eur-daily-easter-2026.body')
    const changed = Buffer.from(readFileSync(path).toString('utf8').replace('1.1711', '1.1712'))
    writeFileSync(path, changed)
    const source = await RecordingsSource.open(dir)
    await assert.rejects(source.body('usd-eur-daily-easter-2026'), (error: RatesError) => {
      assert.equal(error.code, 'ERR_QUENCHZ_RECORDING_CORRUPTED')
      assert.match(
        error.message,
        /^usd-eur-daily-easter-2026\.body is the right length and hashes to [0-9a-f]{16}, where [0-9a-f]{16} was recorded\. The bytes have been changed$/,
      )
      return true
    })
  })

  test('verified bytes are cached: a later change on disk is not re-read', async () => {
    const dir = fixtureDir()
    const source = await RecordingsSource.open(dir)
    const first = await source.body('usd-eur-daily-easter-2026')
    writeFileSync(join(dir, 'usd-eur-daily-easter-2026.body'), 'tampered')
    assert.deepEqual(await source.body('usd-eur-daily-easter-2026'), first)
    const fresh = await RecordingsSource.open(dir)
    await assert.rejects(fresh.body('usd-eur-daily-easter-2026'), { code: 'ERR_QUENCHZ_RECORDING_CORRUPTED' })
  })

  test('a listed body that is not on disk is absent, not modified', async () => {
    const dir = fixtureDir()
    rmSync(join(dir, 'usd-eur-daily-one-week.body'))
    const source = await RecordingsSource.open(dir)
    await assert.rejects(source.body('usd-eur-daily-one-week'), {
      code: 'ERR_QUENCHZ_RECORDING_ABSENT',
      message: 'usd-eur-daily-one-week.body is listed in the index but is not present',
    })
    // Matching skips it and replays the wider recording that is present.
    const outcome = await source.window({ currency: 'USD', from: day('2026-04-07'), to: day('2026-04-08') }, new Date())
    assert.equal(outcome.kind === 'observations' && outcome.observations.length, 8)
  })

  test('a directory without index.json is a clear error', async () => {
    await assert.rejects(openSource({ kind: 'recordings', dir: temp() }), (error: RatesError) => {
      assert.equal(error.code, 'ERR_QUENCHZ_NO_INDEX')
      assert.match(error.message, /^no cassette index at /)
      return true
    })
  })
})

describe('replay by request (fixture)', () => {
  test('the narrowest recording whose period covers the window is replayed', async () => {
    const source = await RecordingsSource.open(fixtureDir())
    const outcome = await source.window({ currency: 'USD', from: day('2026-04-07'), to: day('2026-04-09') }, new Date())
    assert.equal(outcome.kind === 'observations' && outcome.observations.length, 4)
  })

  test('a window no recording covers is refused, naming the series and window', async () => {
    const source = await RecordingsSource.open(fixtureDir())
    const outcome = await source.window({ currency: 'USD', from: day('2026-03-29'), to: day('2026-04-01') }, new Date())
    assert.deepEqual(outcome, {
      kind: 'source_refusal',
      text: 'no recording covers EXR.D.USD.EUR.SP00.A from 2026-03-29 to 2026-04-01',
    })
  })

  test('an unknown recording name is refused without listing the names that exist', async () => {
    const source = await RecordingsSource.open(fixtureDir())
    const outcome = await source.window({ currency: '', from: 0, to: 0, recording: 'nope' }, new Date())
    assert.deepEqual(outcome, { kind: 'source_refusal', text: "no recording named 'nope'" })
  })

  test('the catalogue lists the series of present csv recordings', async () => {
    const source = await RecordingsSource.open(fixtureDir())
    assert.deepEqual(await source.catalogue(), ['EXR.D.USD.EUR.SP00.A'])
  })
})

describe('the shared cassettes', { skip: NO_CASSETTES }, () => {
  test('every present body verifies; the full history is listed but absent, and reported so', async () => {
    const source = await RecordingsSource.open(CASSETTES as string)
    const names = source.entries.map((e) => e.name)
    assert.deepEqual(names, [
      'usd-eur-daily-full-history',
      'usd-eur-daily-easter-2026',
      'usd-eur-daily-one-weekend',
      'usd-eur-daily-one-month',
      'unknown-series-key',
      'format-that-does-not-exist',
    ])
    for (const name of names.slice(1)) await source.body(name)
    await assert.rejects(source.body('usd-eur-daily-full-history'), { code: 'ERR_QUENCHZ_RECORDING_ABSENT' })
  })

  test('a copy with the one-month body cut 155 bytes short refuses to serve it', async () => {
    const dir = temp()
    cpSync(CASSETTES as string, dir, { recursive: true })
    const path = join(dir, 'usd-eur-daily-one-month.body')
    chmodSync(path, 0o644)
    writeFileSync(path, readFileSync(path).subarray(0, 5108 - 155))
    const source = await RecordingsSource.open(dir)
    await assert.rejects(
      source.window({ currency: 'USD', from: day('2026-07-01'), to: day('2026-07-31') }, new Date()),
      { message: /^usd-eur-daily-one-month\.body holds 4,953 bytes and 5,108 were recorded\./ },
    )
  })

  test('the catalogue is the one series the recordings reach', async () => {
    const source = await RecordingsSource.open(CASSETTES as string)
    assert.deepEqual(await source.catalogue(), ['EXR.D.USD.EUR.SP00.A'])
  })
})
