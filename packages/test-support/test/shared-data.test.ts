// The shared-data lookup: found, skipped with the reason, or failing under TOLLGATE_REQUIRE_SERVICES=1.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { findSharedData, sharedDir } from '../src/index.js'

const fake = mkdtempSync(join(tmpdir(), 'test-support-shared-'))
mkdirSync(join(fake, 'seeds'))
writeFileSync(join(fake, 'seeds', 'seed.txt'), 'x')
const saved = { shared: process.env.TOLLGATE_SHARED, require: process.env.TOLLGATE_REQUIRE_SERVICES }
after(() => {
  rmSync(fake, { recursive: true, force: true })
  for (const [key, value] of [
    ['TOLLGATE_SHARED', saved.shared],
    ['TOLLGATE_REQUIRE_SERVICES', saved.require],
  ] as const) {
    if (value === undefined) delete process.env[key]
    else process.env[key] = value
  }
})

test('$TOLLGATE_SHARED wins, and present data is found', () => {
  process.env.TOLLGATE_SHARED = fake
  delete process.env.TOLLGATE_REQUIRE_SERVICES
  assert.equal(sharedDir(), fake)
  assert.deepEqual(findSharedData('seeds/seed.txt'), { path: join(fake, 'seeds', 'seed.txt'), skip: false })
})

test('absent data is a skip reason naming what is missing and how to point at it', () => {
  process.env.TOLLGATE_SHARED = fake
  delete process.env.TOLLGATE_REQUIRE_SERVICES
  const found = findSharedData('data/ecb/eurofxref-hist.zip')
  assert.equal(typeof found.skip, 'string')
  assert.match(found.skip as string, /needs data\/ecb\/eurofxref-hist\.zip .*set TOLLGATE_SHARED/)
})

test('with TOLLGATE_REQUIRE_SERVICES=1 absent data fails instead of skipping', () => {
  process.env.TOLLGATE_SHARED = fake
  process.env.TOLLGATE_REQUIRE_SERVICES = '1'
  assert.throws(() => findSharedData('data/ecb/eurofxref-hist.zip'), /TOLLGATE_REQUIRE_SERVICES=1/)
})
