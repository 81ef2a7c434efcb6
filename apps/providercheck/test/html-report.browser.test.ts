// The HTML report as a person sees it, in headless Chromium: a real failing run's page (verdicts, counts, the
// failing row and what it sent and got back), the `report` subcommand's seal status, and hostile provider bytes
// staying inert text. A full-page screenshot goes to <tmpdir>/providercheck-screenshots/.
// biome-ignore-all lint/performance/useDomNodeTextContent: playwright's page.innerText is the rendered text a person sees (CSS applied), which is what these assertions are about
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { buildReport, type KitRun, main, renderReportHtml } from '../src/index.js'
import { browserSkipReason, openBrowser } from './support/browser.js'
import { freshTarget, kitArgv, SECRET } from './support/kit-harness.js'

const skip = browserSkipReason()

type Styled = { evaluate<R>(fn: (element: unknown) => R): Promise<R> }
/** The computed text colour of an element, as the browser paints it. */
function colourOf(locator: Styled): Promise<string> {
  type Window = { getComputedStyle(element: unknown): { color: string } }
  return locator.evaluate((element) => (globalThis as unknown as Window).getComputedStyle(element).color)
}
const SHOTS = join(tmpdir(), 'providercheck-screenshots')
const ENV = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET }

async function cli(argv: string[], env: Record<string, string> = ENV) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

test("a failing run's page shows the outcome, counts, every check and the failing call", { skip }, async (t) => {
  const target = await freshTarget('replay_differs')
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-html-'))
  const browser = await openBrowser()
  try {
    const json = join(dir, 'report.json')
    const html = join(dir, 'report.html')
    const run = await cli(kitArgv(target.url, '-json', json, '-html', html))
    assert.equal(run.code, 1, run.out + run.err)
    assert.match(run.out, /^html: .*report\.html \(open it in a browser\)$/m)

    const { page, requests } = browser
    await page.goto(pathToFileURL(html).href)
    assert.equal(await page.innerText('[data-testid=outcome]'), 'FAIL')
    const counts = await page.innerText('[data-testid=counts]')
    for (const part of ['19 pass', '1 fail', '1 skip', 'of 21 checks']) assert.ok(counts.includes(part), counts)
    assert.match(await page.innerText('[data-testid=seal]'), /^sealed/)
    assert.equal(await page.locator('[data-testid=checks] tbody tr').count(), 21)

    const failingRow = page.locator('tr[data-check=refund_replay]')
    const cells = await failingRow.locator('td').allInnerTexts()
    assert.deepEqual(cells.slice(1, 4), ['refund_replay', 'fail', 'replay_differs'])
    assert.equal(cells[4], 'the same key and arguments answered a different result (refund_ref changed)')
    assert.match(cells[5] as string, /idempotency \(replay\)/, 'the seed section')
    assert.match(cells[6] as string, /^\d+ ms$/)
    // The verdict colour a person sees: red on pink for fail, green for pass.
    assert.equal(await colourOf(failingRow.locator('.pill')), 'rgb(207, 34, 46)')
    assert.equal(await colourOf(page.locator('tr[data-check=discovery] .pill')), 'rgb(26, 127, 55)')
    assert.match(await page.innerText('tr[data-check=refund] td.reason'), /^2000 minor \(20\.00 USD\) refunded/)

    // The failing row links to its details: what was sent and what came back.
    await failingRow.locator('a').click()
    assert.ok(page.url().endsWith('#check-refund_replay'))
    const details = page.locator('#check-refund_replay')
    assert.ok(await details.isVisible())
    const text = await details.innerText()
    assert.match(text, /CALL 1: SENT\s+tools\/call sr_refund \{"idempotency_key":/)
    assert.match(text, /CAME BACK\s+result \{/)
    assert.doesNotMatch(text, new RegExp(SECRET))
    assert.equal(await page.locator('[data-testid=failure]').count(), 1)
    assert.equal(await page.locator('[data-testid=timeline] .tl-row').count(), 21)
    assert.deepEqual(requests, [pathToFileURL(html).href], 'the page loads nothing else')

    mkdirSync(SHOTS, { recursive: true })
    const shot = join(SHOTS, 'failing-run.png')
    await page.goto(pathToFileURL(html).href)
    await page.screenshot({ path: shot, fullPage: true })
    t.diagnostic(`screenshot: ${shot}`)

    // The same report through `providercheck report`: verified with the secret, NOT verified once altered.
    const page2 = join(dir, 'again.html')
    const again = await cli(['report', json, '-o', page2])
    assert.equal(again.code, 0, again.err)
    assert.match(again.out, /^html: .*again\.html \(seal verified\)$/)
    await page.goto(pathToFileURL(page2).href)
    assert.match(await page.innerText('[data-testid=seal]'), /^verified/)
    const unchecked = await cli(['report', json, '-o', page2], {})
    assert.match(unchecked.out, /seal not checked/)
    const tampered = join(dir, 'tampered.json')
    writeFileSync(tampered, readFileSync(json, 'utf8').replace('"outcome": "fail"', '"outcome": "pass"'))
    const bad = await cli(['report', tampered, '-o', page2])
    assert.equal(bad.code, 1)
    assert.match(bad.err, /seal does NOT verify \(seal_mismatch\)/)
    await page.goto(pathToFileURL(page2).href)
    assert.match(await page.innerText('[data-testid=seal]'), /^does NOT verify \(seal_mismatch\)/)
  } finally {
    await browser.close()
    await target.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

const HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'

test('hostile bytes from a provider are shown as text and never run', { skip }, async () => {
  const run: KitRun = {
    results: [
      { id: 'discovery', verdict: 'pass', code: null, reason: `2026-07-28 server ${HOSTILE}`, durationMs: 3 },
      {
        id: 'describe',
        verdict: 'fail',
        code: `invalid_result"><b>`,
        reason: `sr_describe answered ${HOSTILE}`,
        durationMs: 5,
        exchanges: [{ sent: `tools/call sr_describe {}</pre>${HOSTILE}`, received: `result {"x":"</pre>${HOSTILE}"}` }],
      },
    ],
    passed: false,
    transport: 'mcp',
    interrupted: false,
    era: '2026-07-28',
    credentials: { bearerToken: false, edgeHeaderNames: [`X-A'><script>window.__pwned=3</script>`] },
    startedAt: new Date('2026-12-01T00:00:00.000Z'),
    finishedAt: new Date('2026-12-01T00:00:01.000Z'),
  }
  const report = buildReport(
    run,
    {
      baseUrl: `https://x.example/"><script>window.__pwned=4</script>`,
      tenant: HOSTILE,
      customer: HOSTILE,
      transaction: 'ch_1',
      subscription: 'sub_1',
    },
    SECRET,
  )
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-hostile-'))
  const browser = await openBrowser()
  try {
    const html = join(dir, 'hostile.html')
    writeFileSync(html, renderReportHtml(report, { state: 'sealed', kept: true }))
    const { page, requests } = browser
    await page.goto(pathToFileURL(html).href)
    assert.equal(await page.evaluate('typeof window.__pwned'), 'undefined')
    assert.equal(await page.locator('script, img, td.code b').count(), 0, 'no element came from the bytes')
    assert.equal(await page.innerText('tr[data-check=describe] td.reason'), `sr_describe answered ${HOSTILE}`)
    assert.equal(await page.innerText('tr[data-check=describe] td.code'), 'invalid_result"><b>')
    assert.equal(await page.innerText('[data-testid=target]'), report.target.base_url)
    assert.match(await page.innerText('#check-describe pre.received'), /<\/pre><script>window.__pwned = 1<\/script>/)
    assert.deepEqual(requests, [pathToFileURL(html).href], 'the img never loaded')
    // Defence in depth: even a script element that got into the page would not run under its CSP.
    await page.addScriptTag({ content: 'window.__csp = 1' }).catch(() => undefined)
    assert.equal(await page.evaluate('typeof window.__csp'), 'undefined', 'the CSP blocks inline scripts')
  } finally {
    await browser.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
