#!/usr/bin/env node
// Packs every publishable workspace (each one not marked `private`) with `npm pack` into one folder and prints the
// tarballs' paths, one a line, in dependency order. `--clis` adds the CLI-only apps (quenchz, prove: private, installed
// from their tarballs but never published). Each package's prepack builds what it ships first (`tsc -b`; the apps'
// bundles too), so a tarball never carries a stale dist/. Used by test/packages.test.ts, test/install.test.ts and
// anything else that installs Tollgate as a user would (npm install ./tollgate-*.tgz).
// Usage: node scripts/pack-all.mjs <out-dir> [--clis]
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** Workspaces npm installs into a user's project: every workspace package.json without `private`, as `{ dir, name }`. */
export function publishableWorkspaces() {
  return workspaces().filter((w) => w.private !== true)
}

/** The apps installed only as commands (`npm install -g`), never published: private, but packed for the install test. */
export function cliOnlyApps() {
  return workspaces().filter((w) => w.private === true && w.bin !== undefined)
}

function workspaces() {
  return ['packages', 'apps'].flatMap((top) =>
    readdirSync(join(root, top))
      .sort()
      .map((name) => `${top}/${name}`)
      .filter((dir) => existsSync(join(root, dir, 'package.json')))
      .map((dir) => {
        const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'))
        return { dir, name: pkg.name, private: pkg.private, bin: pkg.bin }
      }),
  )
}

/**
 * Packs the publishable workspaces (and with `clis`, the CLI-only apps) into `outDir`; returns one
 * `{ name, dir, file, size, unpackedSize }` per tarball (`file` absolute; sizes in bytes, as npm reports them).
 */
export function packAll(outDir, { clis = false } = {}) {
  mkdirSync(outDir, { recursive: true })
  const chosen = [...publishableWorkspaces(), ...(clis ? cliOnlyApps() : [])]
  const out = execFileSync(
    NPM,
    ['pack', '--json', '--pack-destination', resolve(outDir), ...chosen.flatMap((w) => ['-w', w.dir])],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 },
  )
  // npm prints the lifecycle scripts' own output before the JSON array.
  const packed = JSON.parse(out.slice(out.indexOf('\n[') + 1 || out.indexOf('[')))
  return packed.map((p) => ({
    name: p.name,
    dir: chosen.find((w) => w.name === p.name)?.dir,
    file: join(resolve(outDir), p.filename),
    size: p.size,
    unpackedSize: p.unpackedSize,
  }))
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const outDir = args.find((a) => !a.startsWith('--'))
  if (outDir === undefined) {
    process.stderr.write('usage: node scripts/pack-all.mjs <out-dir> [--clis]\n')
    process.exit(2)
  }
  try {
    for (const tarball of packAll(outDir, { clis: args.includes('--clis') })) process.stdout.write(`${tarball.file}\n`)
  } catch (error) {
    process.stderr.write(`pack-all: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  }
}
