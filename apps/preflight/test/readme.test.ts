import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { DIAGNOSTICS, EXIT_CODES } from '@tollgate/preflight'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

/** Rows of the markdown table whose header starts with `header` (padding-insensitive). */
function tableRows(header: string[]): string[][] {
  const lines = readme.split('\n')
  const start = lines.findIndex((l) => {
    const cells = l
      .split('|')
      .map((c) => c.trim())
      .filter((c) => c !== '')
    return header.every((h, i) => cells[i] === h)
  })
  assert.ok(start >= 0, `README has a table headed ${header.join(' | ')}`)
  const rows: string[][] = []
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break
    rows.push(
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    )
  }
  return rows
}

test('the README diagnostics table lists exactly the diagnostics, each with its outcome', () => {
  const rows = tableRows(['Diagnostic', 'Outcome', 'Meaning'])
  const documented = Object.fromEntries(rows.map((r) => [r[0]!.replaceAll('`', ''), r[1]]))
  assert.deepEqual(documented, { ...DIAGNOSTICS })
})

test('the README exit table lists every outcome under its exit code', () => {
  const rows = tableRows(['Exit', 'Outcome'])
  const documented: Record<string, number> = {}
  for (const [exit, outcomes] of rows) {
    for (const m of outcomes!.matchAll(/`([a-z_]+)`/g)) documented[m[1]!] = Number(exit)
  }
  assert.deepEqual(documented, { ...EXIT_CODES })
})

test('the README usage example is a real file', () => {
  assert.ok(readme.includes('npx preflight apps/preflight/examples/01-current_control.json'))
  assert.ok(existsSync(new URL('../examples/01-current_control.json', import.meta.url)))
})
