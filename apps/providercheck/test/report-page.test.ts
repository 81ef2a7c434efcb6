// `providercheck report REPORT -o FILE` on files that are not what -json writes: read strictly, shape-checked,
// refused with the reason and no page written; an older report without `not_run` still renders.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { buildReport, type KitRun, main, sealOf } from '../src/index.js'

const SECRET = 'srmps_report_page_secret_0123456789'
const run: KitRun = {
  results: [{ id: 'discovery', verdict: 'pass', code: null, reason: '2026-07-28 server', durationMs: 4 }],
  passed: true,
  transport: 'mcp',
  interrupted: false,
  era: '2026-07-28',
  credentials: { bearerToken: false, edgeHeaderNames: [] },
  startedAt: new Date('2026-12-01T00:00:00.000Z'),
  finishedAt: new Date('2026-12-01T00:00:00.010Z'),
}
const target = { baseUrl: 'https://m.example/mcp', tenant: 't', customer: 'c', transaction: 'x', subscription: 's' }

async function cli(argv: string[], env: Record<string, string> = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET }) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out, err }
}

test('a file that is not a report is refused with the reason, exit 1, and no page is written', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-page-'))
  try {
    const page = join(dir, 'page.html')
    const report = buildReport(run, target, SECRET)
    const cases: [string, RegExp][] = [
      ['not json', /is not strict JSON/],
      ['{"a":1,"a":2}', /is not strict JSON/],
      [
        JSON.stringify({ ...report, outcome: 'great' }),
        /is not a providercheck report: \/outcome must be equal to one/,
      ],
      [
        JSON.stringify({ ...report, checks: [{ id: 'discovery' }] }),
        /not a providercheck report: \/checks\/0 must have/,
      ],
      [JSON.stringify([]), /not a providercheck report: the top level must be object/],
    ]
    for (const [text, message] of cases) {
      const file = join(dir, 'input.json')
      writeFileSync(file, text)
      const r = await cli(['report', file, '-o', page])
      assert.equal(r.code, 1, text)
      assert.equal(r.err.length, 1, text)
      assert.match(r.err[0] as string, message, text)
      assert.equal(existsSync(page), false, text)
    }
    const missing = await cli(['report', join(dir, 'nope.json'), '-o', page])
    assert.equal(missing.code, 2)
    assert.deepEqual(missing.err.slice(1), ['see providercheck --help'])
    assert.match(missing.err[0] as string, /^providercheck: cannot read the report /)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('a report written before not_run existed still renders and verifies', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-page-'))
  try {
    const { not_run: _notRun, seal: _seal, ...body } = buildReport(run, target, SECRET)
    const old = { ...body, seal: sealOf(body, SECRET) }
    const file = join(dir, 'old.json')
    writeFileSync(file, JSON.stringify(old))
    const page = join(dir, 'old.html')
    const r = await cli(['report', file, '-o', page])
    assert.equal(r.code, 0, r.err.join('\n'))
    assert.deepEqual(r.out, [`html: ${page} (seal verified)`])
    assert.match(readFileSync(page, 'utf8'), /data-testid="outcome">PASS</)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test("a REST run's page names its transport, says eras are MCP only, and a transport outside mcp|rest is refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-page-'))
  try {
    const restRun: KitRun = { ...run, transport: 'rest', era: undefined }
    const report = buildReport(restRun, { ...target, baseUrl: 'https://m.example' }, SECRET)
    assert.equal(report.target.transport, 'rest')
    const file = join(dir, 'rest.json')
    writeFileSync(file, JSON.stringify(report))
    const page = join(dir, 'rest.html')
    const r = await cli(['report', file, '-o', page])
    assert.equal(r.code, 0, r.err.join('\n'))
    const html = readFileSync(page, 'utf8')
    assert.match(html, />rest \(sandbox\)</)
    assert.match(html, /none \(eras are MCP only\)/)
    assert.doesNotMatch(html, /discovery did not finish/)
    const forged = join(dir, 'forged.json')
    writeFileSync(forged, JSON.stringify({ ...report, target: { ...report.target, transport: 'grpc' } }))
    const refused = await cli(['report', forged, '-o', join(dir, 'forged.html')])
    assert.equal(refused.code, 1)
    assert.match(refused.err[0] as string, /not a providercheck report: \/target\/transport must be equal to one/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
