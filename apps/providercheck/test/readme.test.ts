// The README's errors table and errors.ts name the same codes.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'

test('every code in errors.ts is in the README errors table and vice versa', () => {
  const source = readFileSync(new URL('../src/errors.ts', import.meta.url), 'utf8')
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const inSource = new Set(source.match(/ERR_PROVIDERCHECK_[A-Z_]+/g))
  const table = readme.slice(readme.indexOf('## Errors'))
  const inReadme = new Set([...table.matchAll(/^\| `(ERR_PROVIDERCHECK_[A-Z_]+)` *\|/gm)].map((m) => m[1]))
  assert.ok(inSource.size >= 5)
  assert.deepEqual([...inReadme].sort(), [...inSource].sort())
})
