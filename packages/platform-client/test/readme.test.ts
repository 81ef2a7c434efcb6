import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const pkg = fileURLToPath(new URL('..', import.meta.url))

test('the README errors table and errors.ts list the same codes', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const source = readFileSync(new URL('../src/errors.ts', import.meta.url), 'utf8')
  const inReadme = new Set([...readme.matchAll(/^\| `(ERR_PLATFORM_[A-Z_]+)` +\|/gm)].map((m) => m[1]))
  const inSource = new Set([...source.matchAll(/'(ERR_PLATFORM_[A-Z_]+)'/g)].map((m) => m[1]))
  assert.deepEqual([...inReadme].sort(), [...inSource].sort())
  assert.equal(inSource.size, 16)
})

test('the quick start runs and prints the charge', () => {
  const r = spawnSync(
    process.execPath,
    ['--conditions=@tollgate/source', '--import', 'tsx', 'examples/quick-start.ts'],
    { cwd: pkg, encoding: 'utf8' },
  )
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout, 'ch_1001: 4999 USD minor units (2026-07-28)\n')
})
