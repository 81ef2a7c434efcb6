// One version for the whole repository: the root package.json's. Every workspace's package.json and every version
// literal the code reports (a CLI's --version, an MCP serverInfo/clientInfo, preflight's output line) must equal it,
// so a release changes them together or this fails naming each one left behind.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as { name: string; version: string }
const VERSION = readJson(join(ROOT, 'package.json')).version
const WORKSPACES = ['packages', 'apps'].flatMap((top) =>
  readdirSync(join(ROOT, top))
    .map((name) => join(ROOT, top, name))
    .filter((dir) => existsSync(join(dir, 'package.json'))),
)

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return /\.(ts|mts|js|mjs)$/.test(name) ? [full] : []
  })
}

test('the root version is semver', () => {
  assert.match(VERSION, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/)
})

test('every workspace package.json carries the root version', () => {
  assert.ok(WORKSPACES.length >= 10, `${WORKSPACES.length} workspaces`)
  const off = WORKSPACES.map((dir) => readJson(join(dir, 'package.json')))
    .filter((pkg) => pkg.version !== VERSION)
    .map((pkg) => `${pkg.name} ${pkg.version}`)
  assert.deepEqual(off, [], `root is ${VERSION}`)
})

test('every version literal in the code equals the root version', () => {
  // `version: '1.2.3'`, `VERSION = '1.2.3'`, `KIT_VERSION = '1.2.3'`: what --version, serverInfo and outputs print.
  const literal = /\b(?:version|[A-Z_]*VERSION)\s*[:=]\s*'(\d+\.\d+\.\d+[^']*)'/g
  const found: string[] = []
  const off: string[] = []
  for (const dir of WORKSPACES) {
    for (const file of ['src', 'scripts'].flatMap((sub) => sourceFiles(join(dir, sub)))) {
      for (const m of readFileSync(file, 'utf8').matchAll(literal)) {
        found.push(relative(ROOT, file))
        if (m[1] !== VERSION) off.push(`${relative(ROOT, file)}: ${m[0]}`)
      }
    }
  }
  // The scan must see the known constants, or it proves nothing.
  for (const known of [
    'apps/preflight/src/outcomes.ts',
    'apps/provider/src/mcp/create-server.ts',
    'apps/prove/src/command-line.ts',
    'apps/providercheck/src/version.ts',
    'apps/quenchz/src/server/constants.ts',
  ]) {
    assert.ok(found.includes(known), `${known} has no version literal the scan recognises`)
  }
  assert.deepEqual(off, [], `root is ${VERSION}`)
})
