// runProvidercheck: the kit as a function a merchant's CI calls, answering the sealed report object.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { runProvidercheck, verifyReport } from '../src/index.js'
import { FIXTURES, freshTarget, SECRET } from './support/kit-harness.js'

for (const transport of ['mcp', 'rest'] as const) {
  test(`over ${transport}, a conformant provider's report passes, is sealed and lists every check`, async () => {
    const target = await freshTarget(undefined, 'json', {}, transport)
    try {
      const seen: string[] = []
      const report = await runProvidercheck({
        transport,
        baseUrl: target.url,
        secret: SECRET,
        allowPrivate: true,
        fixtures: FIXTURES,
        onResult: (r) => seen.push(r.id),
      })
      assert.equal(report.outcome, 'pass', JSON.stringify(report.checks.filter((c) => c.verdict === 'fail')))
      assert.equal(report.target.transport, transport)
      assert.equal(report.summary.fail, 0)
      assert.deepEqual(
        report.checks.map((c) => c.id),
        seen,
      )
      assert.equal(verifyReport(Buffer.from(JSON.stringify(report)), SECRET).ok, true)
    } finally {
      await target.close()
    }
  })
}

test('a failing provider gives a failing report naming the check, with what was sent and received', async () => {
  const target = await freshTarget('replay_differs')
  try {
    const report = await runProvidercheck({
      baseUrl: target.url,
      secret: SECRET,
      allowPrivate: true,
      fixtures: FIXTURES,
    })
    assert.equal(report.outcome, 'fail')
    const failed = report.checks.filter((c) => c.verdict === 'fail')
    assert.ok(failed.length > 0)
    assert.ok(failed.every((c) => (c.exchanges?.length ?? 0) > 0))
  } finally {
    await target.close()
  }
})

test('a loopback base URL fails discovery unless allowPrivate, and every other check is skipped (or does not apply over MCP)', async () => {
  const report = await runProvidercheck({ baseUrl: 'http://127.0.0.1:9/mcp', secret: SECRET, fixtures: FIXTURES })
  assert.equal(report.outcome, 'fail')
  assert.deepEqual([report.checks[0]?.id, report.checks[0]?.code], ['discovery', 'base_url_rejected'])
  assert.deepEqual(
    new Set(report.checks.slice(1).map((c) => `${c.verdict} ${c.code}`)),
    new Set(['skip dependency_failed', 'skip not_applicable']),
  )
})
