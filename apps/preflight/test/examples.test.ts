import assert from 'node:assert/strict'
import { readdirSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { check, checkFile, EXIT_CODES } from '@tollgate/preflight'

const dir = new URL('../examples/', import.meta.url)
const manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as {
  cases: { file: string; outcome: string; exit_code: number; diagnostic: string }[]
}

test('the manifest lists exactly the ten numbered example files', () => {
  const files = readdirSync(dir)
    .filter((f) => /^\d\d-.*\.json$/.test(f))
    .sort()
  assert.equal(files.length, 10)
  assert.deepEqual(
    manifest.cases.map((c) => c.file),
    files,
  )
  assert.deepEqual(
    files.map((f) => f.slice(0, 2)),
    ['01', '02', '03', '04', '05', '06', '07', '08', '09', '10'],
  )
  assert.ok(files.includes('01-current_control.json') && files.includes('04-mismatch_amount_minor.json'))
})

for (const c of manifest.cases) {
  test(`example ${c.file} is ${c.outcome} (exit ${c.exit_code})`, () => {
    assert.equal(EXIT_CODES[c.outcome as keyof typeof EXIT_CODES], c.exit_code, 'manifest agrees with the exit table')
    const expected = { diagnostic: c.diagnostic, exit_code: c.exit_code, outcome: c.outcome, version: '0.1.0' }
    assert.deepEqual(check(readFileSync(new URL(c.file, dir))), expected)
    // realpath: the checker refuses symlinks anywhere in the path, and a clone may live under a symlinked dir.
    assert.deepEqual(checkFile(join(realpathSync(fileURLToPath(dir)), c.file)), expected)
  })
}
