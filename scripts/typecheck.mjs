#!/usr/bin/env node
// Type-checks one or more workspaces (src, test, bench, scripts) against the root config: node scripts/typecheck.mjs apps/provider
import { spawnSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dirs = process.argv.slice(2)
if (dirs.length === 0) {
  console.error('usage: node scripts/typecheck.mjs <workspace dir> [...]')
  process.exit(2)
}
const config = {
  extends: join(root, 'tsconfig.json'),
  include: dirs.flatMap((d) => ['src', 'test', 'bench', 'scripts'].map((s) => join(resolve(root, d), s))),
}
// Inside the repo (git-ignored .tmp/) so type roots resolve from the repo's node_modules.
mkdirSync(join(root, '.tmp'), { recursive: true })
const file = join(root, '.tmp', `tsconfig.check-${process.pid}.json`)
writeFileSync(file, JSON.stringify(config))
const tc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', file], {
  stdio: 'inherit',
})
rmSync(file, { force: true })
process.exit(tc.status ?? 1)
