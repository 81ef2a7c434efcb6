// Rules about the proof's own source: it shares no code with the server, every token it names exists in the
// manifest, and every requirement is cited by a check.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { REQUIREMENTS } from '../src/requirements.ts'

const srcDir = new URL('../src/', import.meta.url)
const sources = readdirSync(srcDir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => [f, readFileSync(new URL(f, srcDir), 'utf8')] as const)
const prove = readFileSync(new URL('prove.ts', srcDir), 'utf8')
// The manifest's token names as the server writes them (pinned here, never imported).
const MANIFEST_TOKENS = [
  'greedyForThisResource',
  'quietForThisResource',
  'forAnotherResource',
  'forTwoResources',
  'withNoAudience',
  'withoutTheRatesScope',
]

test('imports only the official SDK clients and node built-ins: nothing from @tollgate or another app', () => {
  for (const [file, text] of sources) {
    for (const m of text.matchAll(/from '([^']+)'/g)) {
      const spec = m[1] as string
      const allowed =
        spec.startsWith('node:') ||
        spec.startsWith('./') ||
        spec.startsWith('@modelcontextprotocol/client') ||
        spec.startsWith('@modelcontextprotocol/sdk/')
      assert.ok(allowed, `${file} imports ${spec}`)
    }
  }
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  assert.deepEqual(Object.keys(pkg.dependencies).sort(), ['@modelcontextprotocol/client', '@modelcontextprotocol/sdk'])
})

test('every tokens.<name> the proof uses is in the manifest; withoutTheRatesScope is minted but deliberately unused', () => {
  const used = new Set([...prove.matchAll(/tokens\.(\w+)/g)].map((m) => m[1] as string))
  for (const m of prove.matchAll(/\['AUD-\w+', '(\w+)'/g)) used.add(m[1] as string)
  assert.ok(used.size >= 5)
  for (const name of used)
    assert.ok(MANIFEST_TOKENS.includes(name), `prove.ts uses tokens.${name}, which the manifest lacks`)
  assert.equal(used.has('withoutTheRatesScope'), false)
})

test('every requirement is cited by at least one check, and every cited id exists', () => {
  const cited = new Set([...prove.matchAll(/'((?:AUD|REACH|MODERN|BUDGET)-[A-Z]+)'/g)].map((m) => m[1] as string))
  assert.deepEqual([...cited].sort(), Object.keys(REQUIREMENTS).sort())
})

test('the docs state the declared number of checks, once, in their proving section', async () => {
  const { DECLARED_CHECKS } = await import('../src/prove.ts')
  const text = readFileSync(new URL('../../quenchz/README.md', import.meta.url), 'utf8')
  const start = text.indexOf('## Proving it from outside')
  assert.ok(start >= 0, 'the quenchz README has a proving section')
  const end = text.indexOf('\n## ', start + 3)
  const section = text.slice(start, end < 0 ? undefined : end)
  const counts = [...section.matchAll(/\b(\d+) checks\b/g)].map((m) => Number(m[1]))
  assert.deepEqual(counts, [DECLARED_CHECKS])
})

test("this package's README states the declared count in its heading and every exit code the proof uses", async () => {
  const { DECLARED_CHECKS, EXIT } = await import('../src/prove.ts')
  const text = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const counts = [...text.matchAll(/\b(\d+) checks\b/g)].map((m) => Number(m[1]))
  assert.deepEqual(counts, [DECLARED_CHECKS])
  const start = text.indexOf('## Exit codes')
  assert.ok(start >= 0, 'the README has an exit codes section')
  const rows = text
    .slice(start, text.indexOf('\n## ', start + 3))
    .split('\n')
    .filter((l) => /^\| \d/.test(l))
    .flatMap((l) => (l.split('|')[1] as string).split(',').map((c) => Number(c.trim())))
  assert.deepEqual(rows, [...new Set([...Object.values(EXIT), 129, 130, 143])])
})
