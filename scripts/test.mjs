#!/usr/bin/env node
// Runs every package's tests with node's test runner, from TypeScript sources (tsx, @tollgate/source condition).
// Usage: node scripts/test.mjs [dir ...]   (defaults to every workspace). Type-checks first unless --no-typecheck.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const typecheck = !args.includes('--no-typecheck')
const dirs = args.filter((a) => !a.startsWith('--'))
const workspaces = dirs.length
  ? dirs
  : ['packages', 'apps'].flatMap((top) =>
      readdirSync(join(root, top))
        .map((name) => join(top, name))
        .filter((d) => existsSync(join(root, d, 'package.json'))),
    )

function testFiles(dir) {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) return name === 'fixtures' ? [] : testFiles(full)
    return name.endsWith('.test.ts') ? [full] : []
  })
}

if (typecheck) {
  const tc = spawnSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')],
    {
      stdio: 'inherit',
    },
  )
  if (tc.status !== 0) {
    console.error('typecheck failed')
    process.exit(tc.status ?? 1)
  }
}

const files = workspaces
  .flatMap((w) => testFiles(join(root, w, 'test')))
  .map((f) => relative(root, f))
  .sort()
if (files.length === 0) {
  console.error('no test files found')
  process.exit(1)
}
const run = spawnSync(
  process.execPath,
  ['--conditions=@tollgate/source', '--import', 'tsx', '--test', '--test-reporter=spec', ...files],
  { stdio: 'inherit', cwd: root, env: { ...process.env, TOLLGATE_REPO_ROOT: root } },
)
process.exit(run.status ?? 1)
