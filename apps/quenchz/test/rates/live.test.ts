// The live ECB Data Portal source against a loopback server replaying recorded bodies and headers,
// its SQLite cache (a window fetched once; never trusted for days that have since become due), and its timeouts.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, afterEach, before, describe, test } from 'node:test'
import {
  createRatesTools,
  ECB_EXR_BASE,
  type GatedToolAnswer,
  LiveSource,
  openSource,
  parseIsoDay,
  type RatesSource,
  type UpstreamOutcome,
} from '../../src/rates/index.js'
import { cacheCovers, lateRecheckDue, windowPath } from '../../src/rates/sources/live.js'
import { type ReplayServer, recordedReplies, reply, startReplayServer } from './support/replay-server.js'
import { CASSETTES, EASTER_2026, LONG_AFTER, NO_CASSETTES, sdmxCsv, tempDir } from './support/shared.js'

const day = (iso: string) => parseIsoDay(iso) as number
const text = (o: GatedToolAnswer) => o.text
const structured = (o: GatedToolAnswer) => {
  assert.equal(o.ok, true, o.text)
  return o.ok ? o.structuredContent : {}
}

let server: ReplayServer
let cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.reverse()) await c()
  cleanups = []
})
after(async () => server?.close())

async function live(options: { timeoutMs?: number; cacheFile?: string } = {}): Promise<LiveSource> {
  let cacheFile = options.cacheFile
  if (!cacheFile) {
    const t = tempDir()
    cleanups.push(t.cleanup)
    cacheFile = join(t.dir, 'cache.sqlite')
  }
  const source = (await openSource({
    kind: 'live',
    baseUrl: server.baseUrl,
    cacheFile,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  })) as LiveSource
  cleanups.push(() => source.close())
  return source
}

const windowOf = (source: RatesSource, now = LONG_AFTER) => {
  const [windowTool] = createRatesTools({ source, now: () => now })
  return (args: Record<string, unknown>) => (windowTool as NonNullable<typeof windowTool>).call(args)
}

describe('live source against recorded responses', { skip: NO_CASSETTES }, () => {
  before(async () => {
    server = await startReplayServer(recordedReplies(CASSETTES as string))
  })

  test('asks the documented path and answers the Easter window with its certificate', async () => {
    const source = await live()
    const outcome = await windowOf(source)({ currency: 'USD', start: '2026-03-30', end: '2026-04-10' })
    const result = structured(outcome)
    assert.equal((result.observations as unknown[]).length, 8)
    assert.deepEqual((result.coverage as { absent: unknown }).absent, {
      target_closed: 4,
      not_yet_published: 0,
      no_such_observation: 0,
      before_the_series: 0,
    })
    assert.ok(
      server.requests.includes(
        '/service/data/EXR/D.USD.EUR.SP00.A?format=csvdata&startPeriod=2026-03-30&endPeriod=2026-04-10',
      ),
    )
  })

  test('a closed weekend is a 200 with an empty body: answered, two closures', async () => {
    const result = structured(await windowOf(await live())({ currency: 'USD', start: '2026-08-22', end: '2026-08-23' }))
    assert.deepEqual(result.observations, [])
    assert.equal((result.coverage as { absent: { target_closed: number } }).absent.target_closed, 2)
  })

  test('an unknown series is the vendor’s 404 problem+json, refused with its detail', async () => {
    const outcome = await windowOf(await live())({ currency: 'ZZZ', start: '2026-07-01', end: '2026-07-31' })
    assert.equal(outcome.ok, false)
    assert.match(text(outcome), /^the vendor has no such series: No Series was returned for the query: <\?xml /)
  })

  test('a 200 carrying SDMX XML instead of CSV is refused as the wrong format', async () => {
    const recorded = recordedReplies(CASSETTES as string)
    const xml = recorded.get(
      '/service/data/EXR/D.USD.EUR.SP00.A?format=nonsense&startPeriod=2026-07-01&endPeriod=2026-07-31',
    )
    assert.ok(xml)
    assert.equal(xml.headers['content-type'], 'application/vnd.sdmx.genericdata+xml;version=2.1')
    server.routes.set(windowPath('USD', day('2026-06-01'), day('2026-06-30')), xml)
    const outcome = await windowOf(await live())({ currency: 'USD', start: '2026-06-01', end: '2026-06-30' })
    assert.equal(
      text(outcome),
      'the vendor did not answer in the format asked for: asked for csvdata and received XML at status 200, 7563 bytes',
    )
  })
})

describe('live source: statuses, timeouts and the cache', () => {
  before(async () => {
    server ??= await startReplayServer()
  })

  const at = (currency: string, from: string, to: string) => windowPath(currency, day(from), day(to))

  for (const [status, type, body, expected] of [
    [
      503,
      'text/csv',
      sdmxCsv(EASTER_2026),
      "the vendor could not answer: the vendor answered 503, which is its problem and not the request's",
    ],
    [
      400,
      'text/html',
      '<html>Bad Request</html>',
      'the vendor rejected the request: the vendor rejected the parameters',
    ],
    [406, 'text/plain', 'Not Acceptable', 'the vendor rejected the request: unexpected status 406'],
    [
      304,
      'text/csv',
      '',
      'the vendor did not answer what was asked: the vendor reported no change to a request that was never conditional',
    ],
  ] as const) {
    test(`a ${status} is refused with its own message and is not cached`, async () => {
      // A distinct window per status, so no test sees another's replies.
      const path = at(
        'GBP',
        '2026-03-02',
        { 503: '2026-03-10', 400: '2026-03-11', 406: '2026-03-12', 304: '2026-03-13' }[status],
      )
      server.routes.set(path, reply(status, type, body))
      const source = await live()
      const call = windowOf(source)
      const range = new URL(path, 'http://x').searchParams
      const args = { currency: 'GBP', start: range.get('startPeriod'), end: range.get('endPeriod') }
      assert.equal(text(await call(args)), expected)
      assert.equal(text(await call(args)), expected)
      assert.equal(server.requests.filter((r) => r === path).length, 2)
    })
  }

  test('misconfiguration is refused when the source is opened', async () => {
    await assert.rejects(LiveSource.open({ baseUrl: 'data-api.ecb.europa.eu', cacheFile: ':memory:' }), RangeError)
    await assert.rejects(LiveSource.open({ baseUrl: server.baseUrl, cacheFile: ':memory:', timeoutMs: 0 }), RangeError)
  })

  test('a vendor that never answers is a timeout, refused as unavailable', async () => {
    server.routes.set(at('CHF', '2026-03-02', '2026-03-06'), 'hang')
    const source = await live({ timeoutMs: 150 })
    const outcome = await windowOf(source)({ currency: 'CHF', start: '2026-03-02', end: '2026-03-06' })
    assert.equal(text(outcome), 'the vendor could not answer: the vendor did not answer within 150 ms')
  })

  test('a vendor that cannot be reached is refused as unavailable', async () => {
    const t = tempDir()
    cleanups.push(t.cleanup)
    const source = await LiveSource.open({ baseUrl: 'http://127.0.0.1:1', cacheFile: join(t.dir, 'c.sqlite') })
    cleanups.push(() => source.close())
    const outcome = await windowOf(source)({ currency: 'USD', start: '2026-03-30', end: '2026-04-10' })
    assert.equal(text(outcome), 'the vendor could not answer: the vendor could not be reached')
  })

  test('the base may be the origin or the EXR base itself; the request path is the same', async () => {
    const path = at('DKK', '2026-03-02', '2026-03-03')
    server.routes.set(path, reply(200, 'text/csv', sdmxCsv([['2026-03-02', '7.46']], 'DKK')))
    const t = tempDir()
    cleanups.push(t.cleanup)
    const source = await LiveSource.open({
      baseUrl: `${server.baseUrl}/service/data/EXR/`,
      cacheFile: join(t.dir, 'c.sqlite'),
    })
    cleanups.push(() => source.close())
    const result = structured(await windowOf(source)({ currency: 'DKK', start: '2026-03-02', end: '2026-03-03' }))
    assert.deepEqual(result.observations, [['2026-03-02', 7.46]])
    assert.equal(ECB_EXR_BASE, 'https://data-api.ecb.europa.eu/service/data/EXR')
  })

  test('a window is fetched once, and the SQLite cache survives a reopen', async () => {
    server.routes.set(at('USD', '2026-03-30', '2026-04-10'), reply(200, 'text/csv', sdmxCsv(EASTER_2026)))
    const t = tempDir()
    cleanups.push(t.cleanup)
    const cacheFile = join(t.dir, 'cache.sqlite')
    const first = await live({ cacheFile })
    const path = at('USD', '2026-03-30', '2026-04-10')
    const before = server.requests.filter((r) => r === path).length
    const a = await windowOf(first)({ currency: 'USD', start: '2026-03-30', end: '2026-04-10' })
    const b = await windowOf(first)({ currency: 'USD', start: '2026-03-30', end: '2026-04-10' })
    assert.equal(a.text, b.text)
    await first.close()
    const second = await LiveSource.open({ baseUrl: server.baseUrl, cacheFile })
    cleanups.push(() => second.close())
    const c = await windowOf(second)({ currency: 'USD', start: '2026-03-30', end: '2026-04-10' })
    assert.equal(c.text, a.text)
    assert.equal(server.requests.filter((r) => r === path).length - before, 1)
  })

  test('a cache filled from one upstream never answers for another: the key is the whole URL', async () => {
    const path = at('CHF', '2026-03-02', '2026-03-02')
    server.routes.set(path, reply(200, 'text/csv', sdmxCsv([['2026-03-02', '0.91']], 'CHF')))
    const other = await startReplayServer(
      new Map([[path, reply(200, 'text/csv', sdmxCsv([['2026-03-02', '0.95']], 'CHF'))]]),
    )
    cleanups.push(() => other.close())
    const t = tempDir()
    cleanups.push(t.cleanup)
    const cacheFile = join(t.dir, 'shared-cache.sqlite')
    const args = { currency: 'CHF', start: '2026-03-02', end: '2026-03-02' }
    const first = structured(await windowOf(await live({ cacheFile }))(args))
    const second = await LiveSource.open({ baseUrl: other.baseUrl, cacheFile })
    cleanups.push(() => second.close())
    const answered = structured(await windowOf(second)(args))
    assert.deepEqual(first.observations, [['2026-03-02', 0.91]])
    assert.deepEqual(answered.observations, [['2026-03-02', 0.95]])
    assert.equal(other.requests.filter((r) => r === path).length, 1)
  })

  test('a cached answer says when its body was fetched, not when it was served', async () => {
    const path = at('PLN', '2026-03-02', '2026-03-06')
    server.routes.set(path, reply(200, 'text/csv', sdmxCsv([['2026-03-02', '4.2']], 'PLN')))
    const source = await live()
    const args = { currency: 'PLN', start: '2026-03-02', end: '2026-03-06' }
    const fetched = structured(await windowOf(source, new Date('2026-03-10T12:00:00Z'))(args))
    const served = structured(await windowOf(source, new Date('2026-05-01T08:30:00Z'))(args))
    assert.equal(server.requests.filter((r) => r === path).length, 1, 'the second answer came from the cache')
    const completed = (r: Record<string, unknown>) => (r.coverage as { body_completed_at: string }).body_completed_at
    assert.equal(completed(fetched), '2026-03-10T12:00:00Z')
    assert.equal(completed(served), '2026-03-10T12:00:00Z')
  })

  test('sixteen concurrent calls for one window ask the vendor once', async () => {
    const path = at('NOK', '2026-03-02', '2026-03-06')
    server.routes.set(path, reply(200, 'text/csv', sdmxCsv([['2026-03-02', '11.2']], 'NOK')))
    const source = await live()
    const call = windowOf(source)
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => call({ currency: 'NOK', start: '2026-03-02', end: '2026-03-06' })),
    )
    assert.equal(new Set(answers.map((a) => a.text)).size, 1)
    assert.equal(server.requests.filter((r) => r === path).length, 1)
  })

  test('the cache is not trusted for a day that became due after it was filled', async () => {
    let published = false
    server.routes.set(at('SEK', '2026-08-24', '2026-08-24'), () =>
      reply(200, 'text/csv', published ? sdmxCsv([['2026-08-24', '11.0215']], 'SEK') : ''),
    )
    const source = await live()
    const sent = () => server.requests.filter((r) => r === at('SEK', '2026-08-24', '2026-08-24')).length
    const ask = (iso: string) =>
      windowOf(source, new Date(iso))({ currency: 'SEK', start: '2026-08-24', end: '2026-08-24' })
    const early = structured(await ask('2026-08-24T13:00:00Z')) // 15:00 Frankfurt: not yet due
    assert.equal((early.coverage as { absent: { not_yet_published: number } }).absent.not_yet_published, 1)
    const stillEarly = await ask('2026-08-24T14:59:59Z') // cached answer still stands for a day not yet due
    assert.equal(sent(), 1)
    assert.equal(stillEarly.text.includes('"not_yet_published": 1'), true)
    published = true
    const late = structured(await ask('2026-08-24T15:30:00Z')) // 17:30 Frankfurt: due, so the vendor is asked again
    assert.equal(sent(), 2)
    assert.deepEqual(late.observations, [['2026-08-24', 11.0215]])
    await ask('2026-08-25T09:00:00Z') // fetched after the deadline: trusted from now on
    assert.equal(sent(), 2)
  })

  test('a rate published after the deadline is picked up: a cached gap is asked again, at most every 15 minutes, for a day', async () => {
    let published = false
    const path = at('DKK', '2026-08-24', '2026-08-24')
    server.routes.set(path, () => reply(200, 'text/csv', published ? sdmxCsv([['2026-08-24', '7.4631']], 'DKK') : ''))
    const source = await live()
    const sent = () => server.requests.filter((r) => r === path).length
    const ask = (iso: string) =>
      windowOf(source, new Date(iso))({ currency: 'DKK', start: '2026-08-24', end: '2026-08-24' })
    // 17:05 Frankfurt: due and not there yet, so a genuine gap for now.
    assert.ok((await ask('2026-08-24T15:05:00Z')).text.includes('"no_such_observation": 1'))
    assert.equal(sent(), 1)
    published = true
    // Ten minutes later the cached gap still stands (the vendor is not asked more than every 15 minutes).
    assert.ok((await ask('2026-08-24T15:15:00Z')).text.includes('"no_such_observation": 1'))
    assert.equal(sent(), 1)
    // Twenty minutes later it is asked again and the late rate is delivered; from then on the cache holds it.
    const late = structured(await ask('2026-08-24T15:25:00Z'))
    assert.deepEqual(late.observations, [['2026-08-24', 7.4631]])
    await ask('2026-08-24T18:00:00Z')
    assert.equal(sent(), 2)
  })

  test('lateRecheckDue: only a missing latest due day, only within a day of its deadline, only every 15 minutes', () => {
    const monday = day('2026-08-24')
    const due = Date.parse('2026-08-24T15:00:00Z')
    const empty: UpstreamOutcome = { kind: 'empty_window', detail: '' }
    const withMonday: UpstreamOutcome = {
      kind: 'observations',
      observations: [{ day: monday, date: '2026-08-24', lexeme: '1', value: 1 }],
      placeholders: [],
      detail: '',
    }
    const minutes = (n: number) => n * 60_000
    assert.equal(lateRecheckDue(empty, due + minutes(5), monday, monday, due + minutes(20)), true)
    assert.equal(lateRecheckDue(empty, due + minutes(5), monday, monday, due + minutes(19)), false)
    assert.equal(lateRecheckDue(withMonday, due + minutes(5), monday, monday, due + minutes(60)), false)
    // Fetched a day after the deadline and still missing: the gap is the vendor's answer.
    assert.equal(lateRecheckDue(empty, due + minutes(24 * 60), monday, monday, due + minutes(48 * 60)), false)
    // A wrong-format body is not a gap to wait for.
    assert.equal(
      lateRecheckDue({ kind: 'wrong_format', detail: '' }, due + minutes(5), monday, monday, due + minutes(60)),
      false,
    )
    // Nothing due yet: nothing to recheck.
    assert.equal(lateRecheckDue(empty, due - minutes(60), monday, monday, due - minutes(1)), false)
  })

  test('cacheCovers: an answer stands only if fetched after the latest day that has become due', () => {
    const monday = day('2026-08-24')
    const due = Date.parse('2026-08-24T15:00:00Z')
    assert.equal(cacheCovers(due - 1, monday, monday, due - 1), true)
    assert.equal(cacheCovers(due - 1, monday, monday, due), false)
    assert.equal(cacheCovers(due, monday, monday, due + 86_400_000), true)
    // A weekend owes nothing, so its cached emptiness always stands.
    assert.equal(cacheCovers(0, day('2026-08-22'), day('2026-08-23'), Date.parse('2026-09-01T00:00:00Z')), true)
  })

  test('catalogue and ended series come from the whole dataflow, and the fifth reason reaches the certificate', async () => {
    const rowsOnly = (csv: string) => csv.split('\r\n').slice(1).join('\r\n')
    const lastRows =
      sdmxCsv([['2026-08-25', '1.16']], 'USD') +
      rowsOnly(sdmxCsv([['2007-12-31', '0.585274']], 'CYP')) +
      rowsOnly(sdmxCsv([['2022-03-01', '117.201']], 'RUB'))
    const firstRows =
      sdmxCsv([['1999-01-04', '1.1789']], 'USD') +
      rowsOnly(sdmxCsv([['1999-01-04', '0.58231']], 'CYP')) +
      rowsOnly(sdmxCsv([['2005-04-01', '36.1']], 'RUB'))
    server.routes.set(
      '/service/data/EXR/D..EUR.SP00.A?format=csvdata&lastNObservations=1',
      reply(200, 'text/csv', lastRows),
    )
    server.routes.set(
      '/service/data/EXR/D..EUR.SP00.A?format=csvdata&firstNObservations=1',
      reply(200, 'text/csv', firstRows),
    )
    server.routes.set(
      at('CYP', '2007-12-28', '2008-01-04'),
      reply(
        200,
        'text/csv',
        sdmxCsv(
          [
            ['2007-12-28', '0.585274'],
            ['2007-12-31', '0.585274'],
          ],
          'CYP',
        ),
      ),
    )
    const source = await live()
    assert.deepEqual(await source.catalogue(), ['EXR.D.CYP.EUR.SP00.A', 'EXR.D.RUB.EUR.SP00.A', 'EXR.D.USD.EUR.SP00.A'])
    // RUB fell silent more than 7 days before the newest rate, but its currency was not replaced: not ended.
    assert.equal((await source.extent('RUB'))?.ended, false)
    assert.deepEqual(await source.extent('CYP'), {
      first: day('1999-01-04'),
      last: day('2007-12-31'),
      ended: true,
      coveredUntil: null,
    })
    assert.deepEqual(await source.extent('USD'), {
      first: day('1999-01-04'),
      last: day('2026-08-25'),
      ended: false,
      coveredUntil: null,
    })
    const result = structured(await windowOf(source)({ currency: 'CYP', start: '2007-12-28', end: '2008-01-04' }))
    assert.deepEqual((result.coverage as { absent: unknown }).absent, {
      target_closed: 2,
      not_yet_published: 0,
      no_such_observation: 0,
      before_the_series: 0,
      after_the_series: 4,
    })
  })
})
