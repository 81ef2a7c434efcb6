// The README's blocks and numbers are checked against the code that produces them (digest §11).
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { FairBudget, manualClock, NaiveBucket } from '@tollgate/gate'
import { ENDED_CURRENCIES } from '../../src/rates/ended-currencies.js'
import {
  buildCertificate,
  closingReason,
  createRatesTools,
  MAX_WINDOW_DAYS,
  openSource,
  PLACEHOLDER_ROWS_END,
  parseIsoDay,
  RecordingsSource,
} from '../../src/rates/index.js'
import { DEFAULT_TIMEOUT_MS, ENDED_MARGIN_DAYS, EXTENT_TTL_MS } from '../../src/rates/sources/live.js'
import { SERVE_FLAGS } from '../../src/server/cli-options.js'
import {
  CASSETTES,
  EASTER_2026,
  ECB,
  HISTORY_ZIP,
  LONG_AFTER,
  NO_CASSETTES,
  NO_HISTORY,
  QUENCHZ_DIR,
  REPO_ROOT,
  sdmxCsv,
  tempDir,
  writeRecordings,
} from './support/shared.js'

const README = readFileSync(join(QUENCHZ_DIR, 'README.md'), 'utf8')

function jsonBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => m[1] as string)
}

/** The body of a `## ` section (up to the next `## `), or throws if absent. */
function section(heading: string): string {
  const start = README.indexOf(`\n## ${heading}\n`)
  assert.ok(start >= 0, `README lacks "## ${heading}"`)
  const rest = README.slice(start + heading.length + 5)
  const end = rest.indexOf('\n## ')
  return end < 0 ? rest : rest.slice(0, end)
}

function paragraphs(text: string): string[] {
  return text
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean)
}

describe('the generated example blocks', () => {
  let fixture: { dir: string; cleanup: () => void }
  before(() => {
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
  })
  after(() => fixture.cleanup())

  const easter = { currency: 'USD', start: '2026-03-30', end: '2026-04-10' }

  test('the first block is the rates.window text for the Easter window (fixture from the seed figures)', async () => {
    const [windowTool] = createRatesTools({ source: await RecordingsSource.open(fixture.dir), now: () => LONG_AFTER })
    const outcome = await windowTool!.call(easter)
    assert.equal(jsonBlocks(README)[0], outcome.text)
    assert.ok(outcome.text.includes('"requested_calendar_days": 12'))
    assert.ok(outcome.text.includes('"delivered_observations": 8'))
    assert.ok(outcome.text.includes('"expected_observations": 8'))
  })

  test('the same block comes from the recorded Easter cassette', { skip: NO_CASSETTES }, async () => {
    const [windowTool] = createRatesTools({
      source: await openSource({ kind: 'recordings', dir: CASSETTES as string }),
      now: () => LONG_AFTER,
    })
    assert.equal(
      jsonBlocks(README)[0],
      (await windowTool!.call({ cassette: 'usd-eur-daily-easter-2026', ...easter })).text,
    )
  })

  test('the HRK block is the history source’s answer for 2022-12-28 to 2023-01-03', { skip: NO_HISTORY }, async () => {
    const [windowTool] = createRatesTools({
      source: await openSource({ kind: 'history', file: HISTORY_ZIP as string }),
      now: () => LONG_AFTER,
    })
    const outcome = await windowTool!.call({ currency: 'HRK', start: '2022-12-28', end: '2023-01-03' })
    assert.ok(jsonBlocks(README).includes(outcome.text))
  })
})

describe('numbers in the prose', () => {
  test('the 1990 paragraph holds no integer but 1990 and 261, and 261 is the unbounded 1990 count', () => {
    const paragraph = paragraphs(README).find((p) => p.includes('window in 1990'))
    assert.ok(paragraph)
    assert.deepEqual([...new Set(paragraph.match(/\d+/g))].sort(), ['1990', '261'])
    const result = buildCertificate({
      from: parseIsoDay('1990-01-01') as number,
      to: parseIsoDay('1990-12-31') as number,
      delivered: [],
      now: LONG_AFTER,
      seriesStart: parseIsoDay('0001-01-01') as number,
    })
    assert.ok(result.ok)
    assert.equal(result.ok && result.certificate.expected_observations, 261)
  })

  test('the full-history figures are what the calendar owes: 7,078 open days, 62 weekday closures to 2012-05-01', () => {
    for (const figure of ['7,140', '7,078', '62']) assert.ok(README.includes(figure), figure)
    // The recording spans 1999-01-04 to 2026-08-25; placeholder rows stopped after 2012-05-01.
    let open = 0
    let placeholders = 0
    const last = parseIsoDay('2026-08-25') as number
    const encodingChange = parseIsoDay(PLACEHOLDER_ROWS_END) as number
    for (let d = parseIsoDay('1999-01-04') as number; d <= last; d++) {
      const reason = closingReason(d)
      if (reason === null) open++
      else if (reason !== 'weekend' && d <= encodingChange) placeholders++
    }
    assert.deepEqual([open, placeholders, open + placeholders], [7078, 62, 7140])
  })

  test('the full-history recording is the one the index lists at 1,479,424 bytes', { skip: NO_CASSETTES }, async () => {
    const source = await RecordingsSource.open(CASSETTES as string)
    assert.equal(source.entries.find((e) => e.name === 'usd-eur-daily-full-history')?.bytes, 1_479_424)
  })

  test('three publication times, three CET rows, and only one of them in the payload', () => {
    const body = section('What the vendor writes down and the payload does not')
    const first = paragraphs(body)[0] as string
    assert.ok(first.includes('three times'))
    assert.ok(first.includes('only one of them'))
    const rows = body.split('\n').filter((l) => l.startsWith('|') && !l.startsWith('|---'))
    assert.equal(rows.filter((r) => r.includes('CET')).length, 3)
    assert.equal(rows.filter((r) => r.includes('in the payload')).length, 1)
  })

  test('the window cap, timeout and live edge settings are the code’s', () => {
    assert.equal(MAX_WINDOW_DAYS, 15_338)
    assert.ok(README.includes('15,338 days'))
    assert.ok(README.includes(`timeout (${DEFAULT_TIMEOUT_MS / 1000} s by default)`))
    assert.ok(README.includes(`more than ${ENDED_MARGIN_DAYS} days`))
    assert.ok(
      README.includes(`reused for\n${EXTENT_TTL_MS / 3_600_000} hours`) ||
        README.includes(`reused for ${EXTENT_TTL_MS / 3_600_000} hours`),
    )
  })

  test('the ended currencies named in the fifth-reason section are exactly the history file’s', {
    skip: NO_HISTORY,
  }, async () => {
    const source = await openSource({ kind: 'history', file: HISTORY_ZIP as string })
    const ended: string[] = []
    for (const key of await source.catalogue()) {
      const currency = key.split('.')[2] as string
      if ((await source.extent(currency))?.ended) ended.push(currency)
    }
    const first = paragraphs(section('The fifth reason: after_the_series'))[0] as string
    const named = [...new Set(first.match(/\b[A-Z]{3}\b/g))].sort()
    assert.deepEqual(named, ended.sort())
  })

  test('the vendor sends no rate-limit header and no 429 in any recorded response (why the budget is self-imposed)', {
    skip: NO_CASSETTES,
  }, () => {
    assert.ok(README.includes('sends no rate-limit header and lists no 429'))
    const index = JSON.parse(readFileSync(join(CASSETTES as string, 'index.json'), 'utf8')) as Array<{
      status: number
      response_headers: Record<string, string>
    }>
    assert.equal(index.length, 6)
    for (const entry of index) {
      assert.notEqual(entry.status, 429)
      const names = Object.keys(entry.response_headers).map((h) => h.toLowerCase())
      assert.ok(names.length > 5, 'the headers were recorded')
      assert.deepEqual(
        names.filter((h) => h.includes('ratelimit') || h.includes('rate-limit') || h === 'retry-after'),
        [],
      )
    }
  })

  test('the two-callers table is recomputed with the gate’s budgets (frozen clock)', async () => {
    const callers = ['agent-alpha', 'agent-beta']
    const count = async (budget: { request(c: string): Promise<{ admitted: boolean }> }, caller: string, n: number) => {
      let admitted = 0
      for (let i = 0; i < n; i++) if ((await budget.request(caller)).admitted) admitted++
      return admitted
    }
    const naive = new NaiveBucket({ capacity: 60, refillPerSecond: 60, clock: manualClock().now })
    const fair = new FairBudget({
      capacity: 60,
      refillPerSecond: 60,
      callers,
      reserveFraction: 0.5,
      clock: manualClock().now,
    })
    const naiveRow = [await count(naive, 'agent-alpha', 1000), await count(naive, 'agent-beta', 60)]
    const fairRow = [await count(fair, 'agent-alpha', 1000), await count(fair, 'agent-beta', 60)]
    assert.deepEqual(naiveRow, [60, 0])
    assert.deepEqual(fairRow, [45, 15])
    const body = section('Two callers and one budget')
    const row = (start: string) => body.split('\n').find((l) => l.startsWith(start)) ?? ''
    assert.ok(row('| one shared bucket |').includes(`| ${naiveRow[0]} | ${naiveRow[1]} of 60 |`))
    assert.ok(
      row('| a reserve each, plus a shared spare |').includes(
        `| ${fairRow[0]} | ${fairRow[1]} of 60, exactly its reserve |`,
      ),
    )
    assert.ok(README.includes('0 of 60') && README.includes('15 of 60'))
  })
})

const CONCEDING = /\b(does not|do not|cannot|no claim is made|nothing here|is not the same as)\b/

describe('honesty and wording', () => {
  test('the first quarter of the page concedes something', () => {
    assert.match(README.slice(0, Math.floor(README.length / 4)), CONCEDING)
  })

  test('the conceding check rejects pure hype', () => {
    assert.doesNotMatch('The fastest, most complete, fully guaranteed rates service anywhere.', CONCEDING)
  })

  test('Limitations holds at least three bullets', () => {
    assert.ok(
      section('Limitations')
        .split('\n')
        .filter((l) => l.startsWith('- ')).length >= 3,
    )
  })

  test('"Source: ECB statistics." appears', () => {
    assert.ok(README.includes('Source: ECB statistics.'))
  })

  const NEVER = [
    /order placement|place orders|trading/gi,
    /production identity provider|okta|entra id/gi,
    /requests per second|throughput of|p99/gi,
    /order book|matching engine|depth reconstruction/gi,
    /endorsed by the ECB|in partnership with the ECB/gi,
    /tradeable price|tradable price/gi,
  ]
  test('claims on the never-claim list appear only with a negation within 90 characters', () => {
    const flat = README.replace(/\s+/g, ' ')
    for (const pattern of NEVER) {
      for (const m of flat.matchAll(pattern)) {
        const around = flat.slice(Math.max(0, (m.index ?? 0) - 90), (m.index ?? 0) + m[0].length + 90)
        assert.match(around, / not | no |never|cannot|without/, `"${m[0]}" without a negation nearby`)
      }
    }
  })
})

describe('references and commands', () => {
  test('every [x] is an inline link or a defined reference, and local targets exist', () => {
    const defined = new Map(
      [...README.matchAll(/^\[([^\]]+)\]: (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    )
    // Code blocks and inline code spans are not links: `--source live [--live-url URL]` is a command line.
    const body = README.replace(/^\[[^\]]+\]: \S+$/gm, '')
      .replace(/```[\s\S]*?```/g, '')
      .replace(/`[^`\n]*`/g, (span: string, at: number, all: string) =>
        all[at - 1] === '[' && all[at + span.length] === ']' ? span : '',
      ) // but keep [`file`] references
    for (const m of body.matchAll(/\[([^\]]+)\](\()?/g)) {
      if (m[2]) continue
      assert.ok(defined.has(m[1] as string), `undefined reference [${m[1]}]`)
    }
    const inline = [...body.matchAll(/\]\(([^)]+)\)/g)].map((m) => m[1] as string)
    for (const target of [...defined.values(), ...inline]) {
      if (target.startsWith('https://')) continue
      assert.ok(existsSync(resolve(QUENCHZ_DIR, target)), `missing ${target}`)
    }
    assert.doesNotMatch(README, /http:\/\//)
  })

  test('files named before the first section exist', () => {
    const head = README.slice(0, README.indexOf('\n## '))
    for (const m of head.matchAll(/\[`([^`]+)`\]/g)) assert.ok(existsSync(join(QUENCHZ_DIR, m[1] as string)), m[1])
  })

  test('every command line in a sh block is one this repository runs', () => {
    const pkg = JSON.parse(readFileSync(join(QUENCHZ_DIR, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>
    }
    const lines = [...README.matchAll(/```sh\n([\s\S]*?)\n```/g)].flatMap((m) => (m[1] as string).split('\n'))
    assert.ok(lines.length > 0)
    for (const line of lines) {
      if (line.startsWith('node scripts/')) {
        assert.ok(existsSync(join(REPO_ROOT, line.split(' ')[1] as string)), line)
        assert.ok(existsSync(join(REPO_ROOT, line.split(' ')[2] as string)), line)
      } else if (line.startsWith('npm run ')) {
        const [, , script, flag, workspace] = line.split(' ')
        assert.equal(flag, '-w')
        // A script of this workspace or of a sibling it documents (apps/prove runs the proof).
        const scripts =
          workspace === 'apps/quenchz'
            ? pkg.scripts
            : (JSON.parse(readFileSync(join(REPO_ROOT, workspace as string, 'package.json'), 'utf8')) as typeof pkg)
                .scripts
        assert.ok(scripts?.[script as string], line)
      } else if (!line.startsWith('npx quenchz') && !line.startsWith('#')) {
        assert.fail(`unknown command: ${line}`)
      }
    }
  })
})

describe('the serving flags', () => {
  test('every flag of the CLI is in the README’s flag table, and the table names no other', () => {
    const body = section('Serving, tokens and gate')
    const inTable = new Set(
      body
        .split('\n')
        .filter((l) => l.startsWith('| `-'))
        .flatMap((l) => [...(l.split(' | ')[0] as string).matchAll(/--([a-z-]+)/g)].map((m) => m[1] as string)),
    )
    assert.deepEqual([...inTable].sort(), Object.keys(SERVE_FLAGS).sort())
  })

  test('the table of ended currencies is the code’s', () => {
    const body = section('The fifth reason: after_the_series')
    const rows = body.split('\n').filter((l) => /^\| [A-Z]{3}/.test(l))
    const named = rows.flatMap((r) => (r.split(' | ')[0] as string).match(/[A-Z]{3}/g) ?? []).sort()
    assert.deepEqual(named, Object.keys(ENDED_CURRENCIES).sort())
    for (const row of rows) {
      for (const code of (row.split(' | ')[0] as string).match(/[A-Z]{3}/g) ?? []) {
        assert.ok(row.includes(ENDED_CURRENCIES[code]?.replacedOn as string), `${code}: ${row}`)
      }
    }
  })
})

describe('the errors table and errors.ts agree', () => {
  test('every code in one is in the other', () => {
    const source = readFileSync(join(QUENCHZ_DIR, 'src/rates/errors.ts'), 'utf8')
    const inCode = new Set(source.match(/'ERR_QUENCHZ_[A-Z_]+'/g)?.map((c) => c.slice(1, -1)))
    const table = section('Errors (rates core)')
    const inReadme = new Set(table.match(/`ERR_QUENCHZ_[A-Z_]+`/g)?.map((c) => c.slice(1, -1)))
    assert.deepEqual([...inReadme].sort(), [...inCode].sort())
  })
})
