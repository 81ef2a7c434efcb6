// The shrinkwrap a CLI-only app's tarball carries (quenchz, prove: private, installed with npm install -g): exactly its
// runtime closure from the repository's lockfile, so the installed command gets the versions tested here and nothing of
// the workspace. The library apps (preflight, provider, providercheck) ship none: in a merchant's project it would pin
// and nest their whole tree; their @tollgate/* dependencies are the published libraries.
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

const isCliOnly = (app: string) =>
  (JSON.parse(readFileSync(join(ROOT, app, 'package.json'), 'utf8')) as { private?: boolean }).private === true

test('the CLI-only apps are exactly quenchz and prove; the library apps are published', () => {
  const apps = Object.keys(BUNDLES as Record<string, unknown>)
  assert.deepEqual(apps.filter(isCliOnly).sort(), ['apps/prove', 'apps/quenchz'])
  assert.deepEqual(apps.filter((a) => !isCliOnly(a)).sort(), ['apps/preflight', 'apps/provider', 'apps/providercheck'])
})

for (const app of Object.keys(BUNDLES as Record<string, unknown>).filter(isCliOnly)) {
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

test('preflight depends on no third-party npm package: only its own two published libraries', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'apps/preflight/package.json'), 'utf8')) as {
    dependencies?: Record<string, string>
  }
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}).sort(), ['@tollgate/cli', '@tollgate/strict-json'])
})
