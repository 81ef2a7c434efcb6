import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { STRICT_JSON_ERROR_CODES } from '@tollgate/strict-json'

// Pinned as literals: renaming or dropping a code breaks callers that switch on it.
const PINNED = [
  'ERR_STRICT_JSON_BOM',
  'ERR_STRICT_JSON_INVALID_UTF8',
  'ERR_STRICT_JSON_TOO_LARGE',
  'ERR_STRICT_JSON_TOO_DEEP',
  'ERR_STRICT_JSON_DUPLICATE_KEY',
  'ERR_STRICT_JSON_SYNTAX',
  'ERR_STRICT_JSON_NON_FINITE',
  'ERR_STRICT_JSON_NUMBER_OVERFLOW',
  'ERR_STRICT_JSON_LONE_SURROGATE',
  'ERR_STRICT_JSON_TRAILING_CONTENT',
  'ERR_STRICT_JSON_NOT_INTEGER',
  'ERR_STRICT_JSON_UNSAFE_INTEGER',
]

test('error codes are pinned', () => {
  assert.deepEqual([...STRICT_JSON_ERROR_CODES], PINNED)
})

test('the README errors table and errors.ts list the same codes', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  // Column padding may change with formatting; the header words may not.
  const tableStart = readme.search(/^\|\s*Code\s*\|\s*Meaning\s*\|\s*What to do\s*\|/m)
  assert.ok(tableStart >= 0, 'README has the errors table')
  const rows = readme
    .slice(tableStart)
    .split('\n')
    .slice(2)
    .filter((l) => l.startsWith('|'))
  const inReadme = rows.map((l) => /^\|\s*`?(ERR_[A-Z0-9_]+)`?\s*\|/.exec(l)?.[1]).filter((c) => c !== undefined)
  const source = readFileSync(new URL('../src/errors.ts', import.meta.url), 'utf8')
  const inSource = [...source.matchAll(/^\s+(ERR_STRICT_JSON_[A-Z0-9_]+):/gm)].map((m) => m[1])
  assert.deepEqual([...inReadme].sort(), [...inSource].sort())
  assert.equal(inSource.length, PINNED.length)
})
