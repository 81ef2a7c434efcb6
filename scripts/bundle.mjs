#!/usr/bin/env node
// Bundles each CLI app into apps/<app>/bundle/ with esbuild, so `npm pack` in the app yields a tarball that installs
// and runs outside this repository: the workspace libraries (@tollgate/*) are compiled in from their sources, every
// real npm dependency (native better-sqlite3, pg, ioredis, the MCP SDK, ajv, pino, jose, ...) stays an import that
// the installed package's own `dependencies` satisfy. The apps that are libraries too (provider, preflight,
// providercheck) also ship their `dist/`, which imports the published @tollgate/* libraries: those are real
// `dependencies` of such an app. A bundle importing a package the app does not declare, or an app declaring a private
// workspace package (test-support, interop: nothing could install it) as a runtime dependency, is a packaging error:
// it fails `npm pack` (--strict, --shrinkwrap) and is a warning in `npm run build`, so an install never breaks on it.
// `--shrinkwrap` (the CLI-only apps quenchz and prove) also writes the app's npm-shrinkwrap.json from the repository's
// package-lock.json (npm pack's prepack does; postpack removes it): the installed CLI gets exactly the dependency
// versions tested here, and npm can install it from its cache alone, because every package is named by version and
// integrity. The library apps ship no shrinkwrap: in a merchant's project it would pin and nest their whole tree.
// Usage: node scripts/bundle.mjs [--shrinkwrap] [--strict] [app-dir ...]   (default: every app in BUNDLES).
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const root = fileURLToPath(new URL('..', import.meta.url))

/** Files of a workspace library that its code reads at run time next to itself (`new URL('../x/', import.meta.url)`). */
const CONTRACT_ASSETS = ['packages/contract/schemas', 'packages/contract/examples']

/**
 * One entry per installable CLI. The bundle lands in bundle/bin/, one level under bundle/, so a library's
 * `../schemas/` resolves to bundle/schemas/ exactly as it resolves to packages/contract/schemas/ from src/.
 * preflight is CommonJS: it checks one file per process, and node starts a CommonJS file without its ESM loader.
 */
export const BUNDLES = {
  'apps/preflight': { bin: 'preflight', entry: 'src/cli.ts', format: 'cjs', assets: [] },
  'apps/provider': { bin: 'fakemerchant', entry: 'src/fakemerchant.ts', format: 'esm', assets: CONTRACT_ASSETS },
  'apps/providercheck': { bin: 'providercheck', entry: 'src/cli.ts', format: 'esm', assets: CONTRACT_ASSETS },
  'apps/quenchz': { bin: 'quenchz', entry: 'bin/quenchz-source.mjs', format: 'esm', assets: [] },
  'apps/prove': { bin: 'prove', entry: 'src/cli.ts', format: 'esm', assets: [] },
}

const builtins = new Set(builtinModules)

/** Whether `@tollgate/<name>` is a workspace package marked private (never published, so never installable). */
function isPrivateWorkspace(name) {
  const short = name.slice('@tollgate/'.length)
  for (const top of ['packages', 'apps']) {
    const manifest = join(root, top, short, 'package.json')
    if (existsSync(manifest)) return JSON.parse(readFileSync(manifest, 'utf8')).private === true
  }
  return true
}

/** 'ajv/dist/2020.js' → 'ajv'; '@scope/name/x' → '@scope/name'. */
function packageName(specifier) {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]
}

/** Workspace libraries are compiled in; every other bare import stays external. */
const externalsPlugin = {
  name: 'tollgate-externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || builtins.has(args.path)) return { path: args.path, external: true }
      if (args.path.startsWith('@tollgate/')) return undefined
      return { path: args.path, external: true }
    })
  },
}

/** Builds one app's bundle; returns the bundle path. Throws with the problem named when the package is not packable. */
export async function bundleApp(appDir, { strict = true } = {}) {
  const problems = []
  const rel = relative(root, resolve(appDir)).split('\\').join('/')
  const spec = BUNDLES[rel]
  if (spec === undefined)
    throw new Error(`bundle: ${rel} is not a bundled app (known: ${Object.keys(BUNDLES).join(', ')})`)
  const app = join(root, rel)
  const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'))
  const declared = pkg.dependencies ?? {}
  const privateRuntime = Object.keys(declared).filter((d) => d.startsWith('@tollgate/') && isPrivateWorkspace(d))
  if (privateRuntime.length > 0) {
    problems.push(
      `bundle: ${rel} lists ${privateRuntime.join(', ')} in dependencies; a private workspace package can never be installed, so it belongs in devDependencies`,
    )
  }
  const outDir = join(app, 'bundle')
  rmSync(outDir, { recursive: true, force: true })
  const outfile = join(outDir, 'bin', `${spec.bin}.${spec.format === 'cjs' ? 'cjs' : 'mjs'}`)
  const result = await build({
    entryPoints: [join(app, spec.entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: spec.format,
    conditions: ['@tollgate/source'],
    plugins: [externalsPlugin],
    metafile: true,
    legalComments: 'inline',
    logLevel: 'warning',
  })
  const imported = new Set()
  for (const output of Object.values(result.metafile.outputs)) {
    for (const imp of output.imports) {
      if (imp.external && !imp.path.startsWith('node:') && !builtins.has(imp.path)) imported.add(packageName(imp.path))
    }
  }
  const undeclared = [...imported].filter((name) => declared[name] === undefined).sort()
  if (undeclared.length > 0) {
    problems.push(`bundle: ${rel} imports ${undeclared.join(', ')} without declaring it in dependencies`)
  }
  if (problems.length > 0) {
    if (strict) throw new Error(problems.join('\n'))
    for (const problem of problems) process.stderr.write(`warning: ${problem} (npm pack refuses this)\n`)
  }
  for (const asset of spec.assets) {
    cpSync(join(root, asset), join(outDir, asset.split('/').at(-1)), { recursive: true })
  }
  // The repository's licence travels in every tarball.
  mkdirSync(outDir, { recursive: true })
  if (existsSync(join(root, 'LICENSE'))) cpSync(join(root, 'LICENSE'), join(outDir, 'LICENSE'))
  return outfile
}

/** Lock entry fields that describe the package itself (dev/peer flags belong to the repository's tree, not the app's). */
const KEPT_FIELDS = [
  'version',
  'integrity',
  'resolved',
  'hasInstallScript',
  'license',
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
  'os',
  'cpu',
  'optional',
]

/**
 * The app's runtime closure, taken from the repository's package-lock.json: starting at the app's dependencies, each
 * name is resolved the way node resolves it (nearest node_modules upwards). Paths under the app's own folder move to
 * the package root; hoisted paths keep their place.
 */
export function shrinkwrapFor(appDir) {
  const rel = relative(root, resolve(appDir)).split('\\').join('/')
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))
  const pkg = JSON.parse(readFileSync(join(root, rel, 'package.json'), 'utf8'))
  const packages = lock.packages
  const found = new Map()
  const missing = []
  const locate = (from, name) => {
    for (let dir = from; ; ) {
      const candidate = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`
      if (packages[candidate] !== undefined && packages[candidate].link !== true) return candidate
      if (dir === '') return undefined
      const cut = dir.lastIndexOf('/node_modules/')
      dir = cut >= 0 ? dir.slice(0, cut) : ''
    }
  }
  const visit = (from, deps, optional) => {
    for (const name of Object.keys(deps ?? {})) {
      const at = locate(from, name)
      if (at === undefined) {
        if (!optional) missing.push(`${name} (needed by ${from || 'the app'})`)
        continue
      }
      if (found.has(at)) continue
      found.set(at, packages[at])
      const entry = packages[at]
      visit(at, entry.dependencies, false)
      visit(at, entry.optionalDependencies, true)
      const optionalPeers = entry.peerDependenciesMeta ?? {}
      for (const peer of Object.keys(entry.peerDependencies ?? {})) {
        visit(at, { [peer]: '*' }, optionalPeers[peer]?.optional === true)
      }
    }
  }
  visit(rel, pkg.dependencies, false)
  visit(rel, pkg.optionalDependencies, true)
  if (missing.length > 0) throw new Error(`bundle: ${rel}: package-lock.json has no entry for ${missing.join(', ')}`)
  const out = {
    name: pkg.name,
    version: pkg.version,
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: pkg.name, version: pkg.version, license: pkg.license, dependencies: pkg.dependencies ?? {} },
    },
  }
  for (const [at, entry] of [...found].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const path = at.startsWith(`${rel}/`) ? at.slice(rel.length + 1) : at
    out.packages[path] = Object.fromEntries(KEPT_FIELDS.filter((k) => entry[k] !== undefined).map((k) => [k, entry[k]]))
  }
  return out
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const shrinkwrap = args.includes('--shrinkwrap')
  const dirs = args.filter((a) => !a.startsWith('--'))
  const apps = dirs.length > 0 ? dirs : Object.keys(BUNDLES).map((d) => join(root, d))
  try {
    for (const app of apps) {
      await bundleApp(app, { strict: shrinkwrap || args.includes('--strict') })
      if (shrinkwrap) {
        writeFileSync(join(app, 'npm-shrinkwrap.json'), `${JSON.stringify(shrinkwrapFor(app), null, 2)}\n`)
      }
    }
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  }
}
