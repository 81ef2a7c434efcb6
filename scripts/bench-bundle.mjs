#!/usr/bin/env node
// Bench processes run as plain JavaScript on plain node, never under tsx: tsx keeps a module-loader thread with a V8
// heap of its own, and that heap's memory-reducing mark-compacts (13–20 ms, seen with --trace-gc and perf sched) ran
// on a bench server's one pinned core and stopped its event loop for as long — a cost no installed server pays.
// benchBundle(script) compiles a bench script into <its dir>/.build/<name>.mjs (git-ignored), once per process.
// By default only the script itself is compiled: every package it imports, the workspace's own @tollgate/* included,
// stays an import and resolves to its built dist/ as in an installed server, and `import.meta.url` keeps naming the
// source file, so paths relative to it still work. `external` instead bundles the workspace sources too
// (conditions: @tollgate/source) and keeps only the listed npm packages as imports.
// CLI: node scripts/bench-bundle.mjs <script.ts> [args...]  — compiles the script and runs it in this process.
import { basename, dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { buildSync } from 'esbuild'

const built = new Map()

/**
 * @param {string} script path of a TypeScript bench script
 * @param {{ external?: string[] }} [options]
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
    ...(options.external === undefined
      ? { packages: 'external', define: { 'import.meta.url': JSON.stringify(pathToFileURL(source).href) } }
      : { external: options.external, conditions: ['@tollgate/source'] }),
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
