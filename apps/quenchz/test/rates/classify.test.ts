// Classification of upstream responses (digest §7.3): every case, in order, each non-answer with its own refusal.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { classify, refusalText, type UpstreamOutcome } from '../../src/rates/index.js'
import { CASSETTES, NO_CASSETTES, sdmxCsv } from './support/shared.js'

const bytes = (text: string) => Buffer.from(text, 'utf8')
const csv = sdmxCsv([
  ['2012-04-05', '1.3068'],
  ['2012-04-06', ''],
  ['2012-04-09', ''],
  ['2012-04-10', '1.3114'],
])

describe('non-200 statuses', () => {
  test('404 is unknown_series, with the problem+json detail', () => {
    const outcome = classify({
      status: 404,
      body: bytes('{"title":"Not Found","status":404,"detail":"No Series here"}'),
    })
    assert.deepEqual(outcome, { kind: 'unknown_series', detail: 'No Series here' })
    assert.equal(refusalText(outcome), 'the vendor has no such series: No Series here')
  })

  test('404 without a parseable detail reads "no such series"', () => {
    assert.deepEqual(classify({ status: 404, body: bytes('<html>gone</html>') }), {
      kind: 'unknown_series',
      detail: 'no such series',
    })
    assert.equal(classify({ status: 404, body: bytes('{"detail": 7}') }).detail, 'no such series')
  })

  test('400 is rejected_parameters, and its HTML body is not read', () => {
    const outcome = classify({ status: 400, body: bytes('<html><body>Bad Request</body></html>') })
    assert.deepEqual(outcome, { kind: 'rejected_parameters', detail: 'the vendor rejected the parameters' })
    assert.equal(refusalText(outcome), 'the vendor rejected the request: the vendor rejected the parameters')
  })

  for (const status of [500, 501, 503]) {
    test(`${status} is vendor_unavailable, even with a valid CSV body`, () => {
      const outcome = classify({ status, body: bytes(csv) })
      assert.equal(outcome.kind, 'vendor_unavailable')
      assert.equal(
        refusalText(outcome),
        `the vendor could not answer: the vendor answered ${status}, which is its problem and not the request's`,
      )
    })
  }

  test('304 is not_modified: nothing conditional was ever asked', () => {
    const outcome = classify({ status: 304, body: bytes('') })
    assert.equal(outcome.kind, 'not_modified')
    assert.equal(
      refusalText(outcome),
      'the vendor did not answer what was asked: the vendor reported no change to a request that was never conditional',
    )
  })

  test('any other non-200 (406) is rejected_parameters with the status', () => {
    const outcome = classify({ status: 406, body: bytes(csv) })
    assert.equal(refusalText(outcome), 'the vendor rejected the request: unexpected status 406')
  })
})

describe('200 responses are read, never trusted by status', () => {
  test('an empty body is an empty window, a normal answer', () => {
    const outcome = classify({ status: 200, body: bytes('') })
    assert.deepEqual(outcome, { kind: 'empty_window', detail: 'no observation falls inside the window' })
    assert.equal(refusalText(outcome), null)
  })

  test('a whitespace-only body is an empty window too', () => {
    assert.equal(classify({ status: 200, body: bytes(' \r\n\t') }).kind, 'empty_window')
  })

  test('XML (after leading whitespace) is wrong_format, with its byte length', () => {
    const body = bytes('\n  <?xml version="1.0"?><message:GenericData/>')
    const outcome = classify({ status: 200, body })
    assert.equal(
      refusalText(outcome),
      `the vendor did not answer in the format asked for: asked for csvdata and received XML at status 200, ${body.length} bytes`,
    )
  })

  for (const [what, body] of [
    ['a JSON object', '{"observations": []}'],
    ['an HTML error page', '<html><body>Service down</body></html>'],
    ['a plain sentence', 'Sorry, try again later.'],
    ['a CSV with other columns', 'DATE,VALUE\r\n2026-04-01,1.1605\r\n'],
    ['a header with no rows', `${sdmxCsv([]).trimEnd()}`],
    ['a row whose date is not a date', sdmxCsv([['2026-04-31', '1.1']])],
    ['a row whose value is not a number', sdmxCsv([['2026-04-01', 'NaN']])],
  ] as const) {
    test(`${what} is wrong_format`, () => {
      const outcome = classify({ status: 200, body: bytes(body) })
      assert.deepEqual(outcome, { kind: 'wrong_format', detail: 'a 200 whose body is not the expected CSV' })
      assert.equal(
        refusalText(outcome),
        'the vendor did not answer in the format asked for: a 200 whose body is not the expected CSV',
      )
    })
  }

  test('CSV rows become observations; empty values (OBS_STATUS H) are placeholders, never observations', () => {
    const outcome = classify({ status: 200, body: bytes(csv) })
    assert.equal(outcome.kind, 'observations')
    if (outcome.kind !== 'observations') return
    assert.deepEqual(
      outcome.observations.map((o) => [o.date, o.value, o.lexeme]),
      [
        ['2012-04-05', 1.3068, '1.3068'],
        ['2012-04-10', 1.3114, '1.3114'],
      ],
    )
    assert.equal(outcome.placeholders.length, 2)
    assert.equal(outcome.detail, '2 observations, and 2 rows carrying no value at all')
    assert.equal(refusalText(outcome), null)
  })

  test('a value with trailing zeros stripped by the vendor prints as the number (1.1430 → 1.143)', () => {
    const outcome = classify({ status: 200, body: bytes(sdmxCsv([['2026-07-10', '1.1430']])) })
    assert.equal(outcome.kind === 'observations' && JSON.stringify(outcome.observations[0]?.value), '1.143')
    assert.equal(outcome.detail, '1 observations')
  })
})

describe('the recorded bodies classify as the digest maps them', { skip: NO_CASSETTES }, () => {
  const body = (name: string) => readFileSync(join(CASSETTES as string, `${name}.body`))
  test('one-month → observations: 23 rows, last 2026-07-31 = 1.1485', () => {
    const outcome = classify({ status: 200, body: body('usd-eur-daily-one-month') })
    assert.equal(outcome.kind, 'observations')
    if (outcome.kind !== 'observations') return
    assert.equal(outcome.observations.length, 23)
    assert.deepEqual(outcome.observations.at(-1)?.date, '2026-07-31')
    assert.equal(outcome.observations.at(-1)?.value, 1.1485)
  })
  test('easter → 8 observations', () => {
    const outcome = classify({ status: 200, body: body('usd-eur-daily-easter-2026') })
    assert.equal(outcome.kind === 'observations' && outcome.observations.length, 8)
  })
  test('one-weekend → empty_window', () => {
    assert.equal(classify({ status: 200, body: body('usd-eur-daily-one-weekend') }).kind, 'empty_window')
  })
  test('format-that-does-not-exist → wrong_format, at status 200', () => {
    assert.equal(
      classify({ status: 200, body: body('format-that-does-not-exist') }).detail,
      'asked for csvdata and received XML at status 200, 7563 bytes',
    )
  })
  test('unknown-series-key → unknown_series with the vendor detail', () => {
    const outcome = classify({ status: 404, body: body('unknown-series-key') })
    assert.equal(outcome.kind, 'unknown_series')
    assert.match(outcome.detail, /^No Series was returned for the query: <\?xml/)
  })
})

describe('exhaustiveness', () => {
  test('an outcome that is neither answered nor refused is a hard internal error, never a silent answer', () => {
    const invented = { kind: 'rate_limited', detail: 'x' } as unknown as UpstreamOutcome
    assert.throws(() => refusalText(invented), {
      code: 'ERR_QUENCHZ_UNREACHABLE',
      message: 'an upstream outcome of kind rate_limited has neither an answer nor a refusal; this is a bug in quenchz',
    })
  })
})
