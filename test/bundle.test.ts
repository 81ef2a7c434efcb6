// The shrinkwrap an app's tarball carries: exactly its runtime closure from the repository's lockfile, so the
// installed command gets the versions tested here and nothing of the workspace.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
// @ts-expect-error scripts/bundle.mjs is plain JavaScript without type declarations
import { BUNDLES, shrinkwrapFor } from '../scripts/bundle.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
type Lock = { packages: Record<string, { version?: string; integrity?: string; dev?: boolean }> }
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock

for (const app of Object.keys(BUNDLES as Record<string, unknown>)) {
  test(`${app}: the shrinkwrap is the app's runtime closure, pinned to the lockfile`, () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, app, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>
    }
    const wrap = shrinkwrapFor(join(ROOT, app)) as Lock & { packages: { '': { dependencies: object } } }
    assert.deepEqual(wrap.packages[''].dependencies, pkg.dependencies ?? {})
    const paths = Object.keys(wrap.packages).filter((p) => p !== '')
    assert.deepEqual(
      paths.filter((p) => p.includes('@tollgate/')),
      [],
    )
    for (const name of Object.keys(pkg.dependencies ?? {})) assert.ok(paths.includes(`node_modules/${name}`), name)
    for (const path of paths) {
      const entry = wrap.packages[path]
      assert.ok(entry?.integrity?.startsWith('sha512-'), `${path} has no integrity`)
      assert.equal(entry?.version, lock.packages[path]?.version, path)
      assert.equal(entry?.dev, undefined, `${path} keeps the repository's dev flag`)
    }
  })
}

test('preflight ships with no npm dependency at all', () => {
  const wrap = shrinkwrapFor(join(ROOT, 'apps/preflight')) as Lock
  assert.deepEqual(Object.keys(wrap.packages), [''])
})
