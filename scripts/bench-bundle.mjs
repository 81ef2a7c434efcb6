#!/usr/bin/env node
// Bench processes run as plain JavaScript on plain node, never under tsx: tsx keeps a module-loader thread with a V8
// heap of its own, and that heap's memory-reducing mark-compacts (13–20 ms, seen with --trace-gc and perf sched) ran
// on a bench server's one pinned core and stopped its event loop for as long — a cost no installed server pays.
// benchBundle(script) compiles a bench script into <its dir>/.build/<name>.mjs (git-ignored), once per process.
// By default only the script itself is compiled: every package it imports, the workspace's own @tollgate/* included,
// stays an import and resolves to its built dist/ as in an installed server, and `import.meta.url` keeps naming the
// source file, so paths relative to it still work. `workspaceSources` instead bundles the workspace's own @tollgate/*
// sources too (conditions: @tollgate/source) and keeps every other package as an import.
// CLI: node scripts/bench-bundle.mjs <script.ts> [args...]  — compiles the script and runs it in this process.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { buildSync } from 'esbuild'

const built = new Map()

/**
 * Every npm package any workspace depends on (and its subpaths), the workspace's own @tollgate/* left out: what stays
 * an import when the workspace sources are bundled. (esbuild's synchronous build takes no resolve plugin.)
 */
function npmPackages() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..')
  const manifests = [join(root, 'package.json')]
  for (const dir of ['packages', 'apps'])
    for (const name of readdirSync(join(root, dir))) {
      const manifest = join(root, dir, name, 'package.json')
      if (existsSync(manifest)) manifests.push(manifest)
    }
  const names = new Set()
  for (const manifest of manifests) {
    const pkg = JSON.parse(readFileSync(manifest, 'utf8'))
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'])
      for (const name of Object.keys(pkg[field] ?? {})) if (!name.startsWith('@tollgate/')) names.add(name)
  }
  return [...names].flatMap((name) => [name, `${name}/*`])
}

/**
 * @param {string} script path of a TypeScript bench script
 * @param {{ workspaceSources?: boolean }} [options]
 * @returns {string} path of the compiled .mjs
 */
export function benchBundle(script, options = {}) {
  const source = resolve(script)
  const done = built.get(source)
  if (done !== undefined) return done
  const outfile = join(dirname(source), '.build', basename(source).replace(/\.ts$/, '.mjs'))
  buildSync({
    entryPoints: [source],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    logLevel: 'warning',
    ...(options.workspaceSources === true
      ? { external: npmPackages(), conditions: ['@tollgate/source'] }
      : { packages: 'external', define: { 'import.meta.url': JSON.stringify(pathToFileURL(source).href) } }),
  })
  built.set(source, outfile)
  return outfile
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const [script, ...args] = process.argv.slice(2)
  if (script === undefined) {
    console.error('usage: node scripts/bench-bundle.mjs <script.ts> [args...]')
    process.exit(2)
  }
  const compiled = benchBundle(script)
  process.argv = [process.argv[0] ?? 'node', compiled, ...args]
  await import(pathToFileURL(compiled).href)
}
