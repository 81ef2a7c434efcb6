#!/usr/bin/env node
// Runs the tests with node's test runner, from TypeScript sources (tsx, @tollgate/source condition): one
// `node --test` per workspace, each under a header line naming it, then one summary line CI can read:
// `N passed, N failed, N skipped`. Exit status is non-zero when any test failed.
// Usage: node scripts/test.mjs [dir ...] [--no-typecheck]
//   no dir: every workspace plus the repository-wide tests in test/; dirs are relative to the current folder, so
//   `npm test` inside a package (its script is `node ../../scripts/test.mjs .`) runs that package only.
// Type-checks first (the whole repo, or the given workspaces) unless --no-typecheck.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const typecheck = !args.includes('--no-typecheck')
const dirs = args.filter((a) => !a.startsWith('--')).map((d) => relative(root, resolve(process.cwd(), d)) || '.')
const workspaces = dirs.length
  ? dirs
  : [
      ...['packages', 'apps'].flatMap((top) =>
        readdirSync(join(root, top))
          .map((name) => join(top, name))
          .filter((d) => existsSync(join(root, d, 'package.json'))),
      ),
      '.',
    ]

function testFiles(dir) {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) return name === 'fixtures' ? [] : testFiles(full)
    return name.endsWith('.test.ts') ? [full] : []
  })
}

if (typecheck) {
  const tc =
    dirs.length === 0
      ? spawnSync(
          process.execPath,
          [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.json')],
          {
            stdio: 'inherit',
          },
        )
      : spawnSync(process.execPath, [join(root, 'scripts/typecheck.mjs'), ...dirs.map((d) => join(root, d))], {
          stdio: 'inherit',
        })
  if (tc.status !== 0) {
    console.error('typecheck failed')
    process.exit(tc.status ?? 1)
  }
}

/** Runs one workspace's files, echoing the spec reporter's output; resolves with its counts. */
function runWorkspace(files) {
  return new Promise((resolvePromise) => {
    const child = spawn(
      process.execPath,
      ['--conditions=@tollgate/source', '--import', 'tsx', '--test', '--test-reporter=spec', ...files],
      { cwd: root, env: { ...process.env, TOLLGATE_REPO_ROOT: root }, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    // The runner's summary (ℹ pass N …) comes before its list of failing tests, which can be long: keep enough of
    // the output to still hold it (the last 4 000 characters once lost it, and counted a workspace as 0 passed).
    let tail = ''
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk)
      tail = (tail + chunk.toString('utf8')).slice(-2_000_000)
    })
    child.once('close', (code) => {
      // The last summary line of each kind: the runner's own, after every file's output.
      const count = (label) => Number([...tail.matchAll(new RegExp(`^ℹ ${label} (\\d+)$`, 'gm'))].at(-1)?.[1] ?? 0)
      const failed = count('fail') + count('cancelled')
      // A runner that died before its summary counts as a failure even with no failed test reported.
      resolvePromise({ passed: count('pass'), failed: failed || (code === 0 ? 0 : 1), skipped: count('skipped') })
    })
  })
}

const total = { passed: 0, failed: 0, skipped: 0 }
let ran = 0
for (const workspace of workspaces) {
  const testDir = workspace === '.' ? join(root, 'test') : join(root, workspace, 'test')
  const files = testFiles(testDir)
    .map((f) => relative(root, f))
    .sort()
  if (files.length === 0) continue
  ran++
  const label = workspace === '.' ? 'repository (test/)' : workspace
  process.stdout.write(`\n=== ${label}: ${files.length} test file${files.length === 1 ? '' : 's'}\n`)
  const counts = await runWorkspace(files)
  process.stdout.write(`=== ${label}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`)
  total.passed += counts.passed
  total.failed += counts.failed
  total.skipped += counts.skipped
}
if (ran === 0) {
  console.error('no test files found')
  process.exit(1)
}
process.stdout.write(`\n${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped\n`)
process.exit(total.failed === 0 ? 0 : 1)
