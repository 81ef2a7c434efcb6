// Every package a user imports leaves the repository as a tarball that is what its package.json claims (issue 23 §1):
// packed once with scripts/pack-all.mjs, each tarball passes publint (strict) and @arethetypeswrong/cli and
// `npm publish --dry-run` without a warning; then all of them install into an empty project outside the repository
// (their npm dependencies from the loopback registry: the locked versions, no network), each one imports there,
// resolves only inside that project, declares every package its dist imports, and a TypeScript file using them
// type-checks with moduleResolution nodenext against the installed .d.ts files alone.
//
// Written-down exception: attw runs with `--profile esm-only`. The packages are ESM only (`"type": "module"`, no
// `require` condition), so the profile leaves out the node10 resolution (no `exports` support at all) and a CommonJS
// `require` from node16 (which resolves to ESM: an error before Node 20.19's require(esm)). Every other problem counts.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import {
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { builtinModules } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type PostgresProbe, probePostgres } from '@tollgate/test-support'
import { packAll } from '../scripts/pack-all.mjs'
import { type LoopbackRegistry, startLoopbackRegistry } from './support/loopback-registry.ts'
import { isolatedNpmEnv, NPM, ROOT, run, userNpmCache } from './support/npm-install.ts'

/** Pinned as a literal: a package dropping out of (or slipping into) the published set is a deliberate change. */
const PUBLISHED = [
  '@tollgate/cli',
  '@tollgate/contract',
  '@tollgate/gate',
  '@tollgate/mcp-endpoint',
  '@tollgate/operability',
  '@tollgate/platform-client',
  '@tollgate/preflight',
  '@tollgate/provider',
  '@tollgate/providercheck',
  '@tollgate/signing',
  '@tollgate/strict-json',
]
/** Subpath entry points beyond ".", each of which must resolve and type-check too. */
const SUBPATHS = ['@tollgate/provider/testing']
const BIN = join(ROOT, 'node_modules', '.bin')

const lockedVersion = (name: string): string => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string }>
  }
  return lock.packages[`node_modules/${name}`]?.version as string
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? filesUnder(full) : [full]
  })
}

/** 'ajv/dist/2020.js' → 'ajv'; '@scope/name/x' → '@scope/name'. */
const packageName = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/')

describe('the publishable packages, packed and installed into an empty project', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-packages-'))
  const project = join(work, 'project')
  let tarballs: { name: string; file: string; size: number; unpackedSize: number }[] = []
  let registry: LoopbackRegistry | undefined
  let installed: { code: number | null; stderr: string } | undefined

  before(async () => {
    tarballs = packAll(join(work, 'tarballs'))
    registry = await startLoopbackRegistry(join(ROOT, 'package-lock.json'), userNpmCache())
    mkdirSync(project)
    writeFileSync(
      join(project, 'package.json'),
      `${JSON.stringify(
        // npm 11 runs no install script unless allowed: better-sqlite3 (the provider's SQLite) needs its own.
        { name: 'merchant-project', private: true, type: 'module', allowScripts: { 'better-sqlite3': true } },
        null,
        2,
      )}\n`,
    )
    const install = await run(
      NPM,
      [
        'install',
        ...tarballs.map((t) => t.file),
        `typescript@${lockedVersion('typescript')}`,
        `@types/node@${lockedVersion('@types/node')}`,
      ],
      { cwd: project, env: isolatedNpmEnv(work, registry.url) },
    )
    const missing = registry.missing.length > 0 ? `\nnot in the npm cache: ${registry.missing.join(', ')}` : ''
    installed = { code: install.code, stderr: `${install.stderr.slice(-4000)}${missing}` }
  })

  after(async () => {
    await registry?.close()
    rmSync(work, { recursive: true, force: true })
  })

  test('exactly the publishable workspaces are packed, each carrying its licence, README, changelog, dist and types', () => {
    assert.deepEqual(tarballs.map((t) => t.name).sort(), PUBLISHED)
    for (const { name, file } of tarballs) {
      const listing = readTarList(file)
      for (const required of [
        'package/LICENSE',
        'package/README.md',
        'package/CHANGELOG.md',
        'package/dist/index.js',
        'package/dist/index.d.ts',
      ])
        assert.ok(listing.includes(required), `${name} lacks ${required}`)
      assert.ok(
        !listing.some((f) => f.endsWith('.tsbuildinfo') || f.includes('/test/')),
        `${name} ships build state or tests`,
      )
      assert.ok(!listing.includes('package/npm-shrinkwrap.json'), `${name} ships a shrinkwrap`)
    }
  })

  test('publint finds nothing in any tarball (strict: warnings count)', async () => {
    for (const { name, file } of tarballs) {
      const r = await run(process.execPath, [join(ROOT, 'node_modules/publint/src/cli.js'), 'run', file, '--strict'], {
        cwd: work,
      })
      assert.equal(r.code, 0, `${name}:\n${r.stdout}${r.stderr}`)
      assert.match(r.stdout, /All good!/, `${name}:\n${r.stdout}`)
    }
  })

  test('arethetypeswrong finds no problem in any tarball (profile esm-only, see the header)', async () => {
    for (const { name, file } of tarballs) {
      const r = await run(
        join(BIN, 'attw'),
        [file, '--profile', 'esm-only', '--no-definitely-typed', '--format', 'json', '--no-color'],
        { cwd: work },
      )
      const report = JSON.parse(r.stdout) as { analysis: { problems: { kind: string; resolutionKind?: string }[] } }
      const counted = report.analysis.problems.filter(
        (p) => p.resolutionKind !== 'node10' && p.resolutionKind !== 'node16-cjs',
      )
      assert.deepEqual(counted, [], name)
      assert.equal(r.code, 0, `${name}: ${r.stderr}`)
    }
  })

  test('npm publish --dry-run accepts every tarball without a warning (and publishes nothing)', async () => {
    // npm 11 asks the registry about the package even on a dry run: the loopback registry answers (it does not know
    // @tollgate/*, and accepts no PUT), with no retries, so nothing can leave this machine and nothing waits.
    const url = new URL(registry?.url as string)
    for (const { name, file } of tarballs) {
      const r = await run(
        NPM,
        [
          'publish',
          '--dry-run',
          file,
          '--registry',
          url.href,
          '--fetch-retries=0',
          // A token for this registry only, so npm does not warn that no one is logged in.
          `--//${url.host}${url.pathname}:_authToken=dry-run-only`,
        ],
        { cwd: work },
      )
      assert.equal(r.code, 0, `${name}:\n${r.stderr}`)
      assert.doesNotMatch(r.stderr, /npm (warn|error)/i, name)
      assert.match(r.stderr, /public access \(dry-run\)/, name)
    }
  })

  test('all tarballs install together into an empty project (npm dependencies from the registry)', () => {
    assert.equal(installed?.code, 0, installed?.stderr)
  })

  test('each package imports in the project and resolves only inside it', async () => {
    assert.equal(installed?.code, 0, 'the install failed')
    const script = `
      const out = {}
      for (const name of ${JSON.stringify([...PUBLISHED, ...SUBPATHS])}) {
        const where = import.meta.resolve(name)
        const exported = Object.keys(await import(name))
        out[name] = { where, exported: exported.length }
      }
      console.log(JSON.stringify(out))`
    const r = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project })
    assert.equal(r.code, 0, r.stderr)
    const loaded = JSON.parse(r.stdout) as Record<string, { where: string; exported: number }>
    for (const [name, { where, exported }] of Object.entries(loaded)) {
      assert.ok(where.startsWith(`file://${project}/node_modules/`), `${name} resolved to ${where}`)
      assert.match(where, /\/dist\/(?:[^/]+\/)*[^/]+\.js$/, name)
      assert.ok(exported > 0, `${name} exports nothing`)
    }
  })

  test("every bare import in an installed package's dist is a declared dependency or a node builtin", () => {
    assert.equal(installed?.code, 0, 'the install failed')
    const builtins = new Set(builtinModules)
    const problems: string[] = []
    for (const name of PUBLISHED) {
      const dir = join(project, 'node_modules', name)
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<
        string,
        Record<string, string> | undefined
      >
      const declared = new Set(
        ['dependencies', 'peerDependencies', 'optionalDependencies'].flatMap((k) => Object.keys(manifest[k] ?? {})),
      )
      for (const file of filesUnder(join(dir, 'dist')).filter((f) => f.endsWith('.js'))) {
        const source = readFileSync(file, 'utf8')
        for (const m of source.matchAll(
          /(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"]([^'"./][^'"]*)['"]|import\(\s*['"]([^'"./][^'"]*)['"]\s*\)/g,
        )) {
          const specifier = (m[1] ?? m[2]) as string
          if (specifier.startsWith('node:') || builtins.has(specifier)) continue
          const dep = packageName(specifier)
          if (!declared.has(dep)) problems.push(`${name}: ${file.slice(dir.length + 1)} imports ${dep}`)
        }
      }
    }
    assert.deepEqual(problems, [])
  })

  test('a TypeScript file using every package type-checks against the installed .d.ts (nodenext, strict)', async () => {
    assert.equal(installed?.code, 0, 'the install failed')
    const names = [...PUBLISHED, ...SUBPATHS]
    const ident = (name: string) =>
      name.replace(/^@tollgate\//, '').replace(/[^a-z]+(.)/g, (_, c: string) => c.toUpperCase())
    writeFileSync(
      join(project, 'use.ts'),
      [
        ...names.map((n) => `import * as ${ident(n)} from '${n}'`),
        "import type { BillingPort } from '@tollgate/provider'",
        '',
        `export const modules: object[] = [${names.map(ident).join(', ')}]`,
        'export type Port = BillingPort',
        '',
      ].join('\n'),
    )
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
          types: ['node'],
          skipLibCheck: false,
        },
        files: ['use.ts'],
      }),
    )
    const r = await run(process.execPath, [join(project, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: project,
    })
    // Our own declaration files must be sound; a dependency's own .d.ts problems are not ours to fix.
    const ours = r.stdout.split('\n').filter((l) => /node_modules\/@tollgate\/|^use\.ts/.test(l))
    assert.deepEqual(ours, [], r.stdout)
    assert.equal(r.code, 0, r.stdout)
  })

  // Issue 23 §5: the worked merchant, consumed as a merchant would — its own folder, `npm install` with the tarballs
  // standing in for the npm registry's @tollgate/* (the example's package.json is copied unchanged), then its own
  // `npm test`: tsc (strict, nodenext) over its port and tests, the testing kit on SQLite and PostgreSQL, and
  // providercheck over MCP (both eras) and REST.
  describe('examples/merchant-billing, installed from the tarballs into a clean folder', () => {
    const merchant = join(work, 'merchant-billing')
    let exampleRegistry: LoopbackRegistry | undefined
    let install: { code: number | null; stderr: string; ms: number } | undefined
    let postgres: PostgresProbe | undefined

    before(async () => {
      postgres = await probePostgres()
      cpSync(join(ROOT, 'examples/merchant-billing'), merchant, {
        recursive: true,
        filter: (source) => !/[/\\](node_modules|dist)([/\\]|$)/.test(source),
      })
      exampleRegistry = await startLoopbackRegistry(
        join(ROOT, 'package-lock.json'),
        userNpmCache(),
        tarballs.map((t) => t.file),
      )
      const started = performance.now()
      const r = await run(NPM, ['install'], { cwd: merchant, env: isolatedNpmEnv(work, exampleRegistry.url) })
      const missing = exampleRegistry.missing.length > 0 ? `\nnot in the npm cache: ${exampleRegistry.missing}` : ''
      install = { code: r.code, stderr: `${r.stderr.slice(-4000)}${missing}`, ms: performance.now() - started }
    })

    after(async () => {
      await exampleRegistry?.close()
    })

    test('npm install alone gives it every package, none of them a file of this repository', (t) => {
      assert.equal(install?.code, 0, install?.stderr)
      t.diagnostic(`npm install of the example in a clean folder: ${Math.round(install?.ms ?? 0)} ms`)
      for (const name of ['@tollgate/provider', '@tollgate/providercheck', '@tollgate/contract']) {
        const dir = join(merchant, 'node_modules', name)
        assert.equal(lstatSync(dir).isSymbolicLink(), false, `${name} is a link`)
        assert.ok(realpathSync(dir).startsWith(realpathSync(merchant)), `${name} resolves outside the example`)
      }
    })

    test('its own npm test passes: tsc, the testing kit on SQLite and PostgreSQL, providercheck over MCP and REST', async (t) => {
      assert.equal(install?.code, 0, 'the install failed')
      // Without NODE_TEST_CONTEXT (set by this runner), the example's node --test reports in its own TAP, as for a merchant.
      const { NODE_TEST_CONTEXT: _, ...inherited } = process.env
      const env = { ...inherited, ...(postgres?.skip === undefined && { DATABASE_URL: postgres?.url }) }
      const r = await run(NPM, ['test'], { cwd: merchant, env })
      assert.equal(r.code, 0, `${r.stdout.slice(-6000)}\n${r.stderr.slice(-2000)}`)
      const count = (what: string) => Number(r.stdout.match(new RegExp(`^(?:#|ℹ) ${what} (\\d+)$`, 'm'))?.[1])
      t.diagnostic(`example tests: ${count('pass')} passed, ${count('skipped')} skipped`)
      assert.equal(count('fail'), 0)
      // 16 port checks and 5 providercheck runs with PostgreSQL; without it, the SQLite half.
      assert.ok(count('pass') >= (postgres?.skip === undefined ? 21 : 11), r.stdout.slice(-3000))
      if (postgres?.skip === undefined) assert.equal(count('skipped'), 0)
    })
  })

  test('the tarball sizes are reported (packed and unpacked, bytes)', (t) => {
    for (const { name, size, unpackedSize } of tarballs)
      t.diagnostic(`${name}: ${size} packed, ${unpackedSize} unpacked`)
    assert.ok(tarballs.every((x) => x.size > 0 && x.unpackedSize >= x.size))
  })
})

function readTarList(file: string): string[] {
  return execFileSync('tar', ['tzf', file], { encoding: 'utf8' }).split('\n').filter(Boolean)
}
