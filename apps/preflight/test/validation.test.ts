import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { validate } from '../scripts/validate.js'

// The run's report goes to a temp dir: `npm test` leaves the committed validation/tests.json (written only by
// `npm run validate -w apps/preflight`) as it was.
test('the validation run passes every case and records it in a tests.json report', { timeout: 300_000 }, async (t) => {
  const reportDir = mkdtempSync(join(tmpdir(), 'preflight-validation-'))
  t.after(() => rmSync(reportDir, { recursive: true, force: true }))
  const { results, report } = await validate(reportDir)
  assert.equal(report, join(reportDir, 'tests.json'))
  const failed = results.filter((r) => !r.pass).map((r) => `${r.name}: ${JSON.stringify(r.actual)}`)
  assert.deepEqual(failed, [])
  assert.ok(results.length >= 40, `${results.length} cases`)
  const written = JSON.parse(readFileSync(report, 'utf8')) as {
    node: string
    os: string
    date: string
    counts: { total: number; passed: number; failed: number }
  }
  assert.equal(written.node, process.version)
  assert.deepEqual(
    { total: written.counts.total, passed: written.counts.passed, failed: written.counts.failed },
    { total: results.length, passed: results.length, failed: 0 },
  )
  // Every outcome and exit code of the seed table appears among the cases.
  const outcomes = new Set(results.map((r) => r.actual.outcome))
  for (const o of [
    'consistent_sample',
    'usage',
    'mismatch',
    'pending',
    'failed',
    'rpc_error',
    'tool_error',
    'missing_receipt',
    'invalid_input',
    'invalid_envelope',
    'invalid_receipt',
    'out_of_scope',
    'input_io_error',
  ]) {
    assert.ok(outcomes.has(o), o)
  }
  // SHA-256 is recorded where a file exists and is n/a for missing/FIFO/argument cases.
  const byName = new Map(results.map((r) => [r.name, r]))
  assert.equal(byName.get('missing-file')?.sha256_before, 'n/a')
  assert.match(byName.get('example 01-current_control.json')!.sha256_before, /^[0-9a-f]{64}$/)
})
