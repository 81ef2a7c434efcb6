// The kit's modules form no import cycle, type-only imports included: a library module that reached back into the
// command line (checks → command line → report → run → checks) made the library depend on its CLI (issue 23 §6).
// The imports are read with the TypeScript compiler's own pre-processor, so every form counts (static, `export …
// from`, `import type`, dynamic `import()`), and comments or strings that merely look like imports do not.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const SRC = fileURLToPath(new URL('../src/', import.meta.url))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return name.endsWith('.ts') ? [full] : []
  })
}

/** Each module's relative imports, resolved to the .ts files they name. */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(dir)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true)
    const local = importedFiles
      .map((i) => i.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name.replace(/\.js$/, '.ts')))
      .map((target) => (existsSync(target) ? target : join(target.replace(/\.ts$/, ''), 'index.ts')))
    graph.set(file, local)
  }
  return graph
}

/** Every cycle a depth-first walk meets, each as the chain of files that closes it. */
function importCycles(graph: Map<string, string[]>): string[][] {
  const onPath = new Set<string>()
  const done = new Set<string>()
  const path: string[] = []
  const cycles: string[][] = []
  const visit = (file: string) => {
    onPath.add(file)
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      if (onPath.has(next)) cycles.push([...path.slice(path.indexOf(next)), next])
      else if (!done.has(next)) visit(next)
    }
    path.pop()
    onPath.delete(file)
    done.add(file)
  }
  for (const file of graph.keys()) if (!done.has(file)) visit(file)
  return cycles
}

test('the import walk sees the kit: every module is read and the run reaches the checks', () => {
  const graph = importGraph(SRC)
  assert.ok(graph.size >= 25, `${graph.size} modules`)
  const edges = (from: string) => (graph.get(join(SRC, from)) ?? []).map((f) => relative(SRC, f))
  assert.ok(edges('run-kit.ts').includes('checks/index.ts'), edges('run-kit.ts').join(', '))
  // A cycle planted in a copy of the graph is found, with its chain named.
  const planted = new Map(graph)
  planted.set(join(SRC, 'checks/index.ts'), [
    ...(graph.get(join(SRC, 'checks/index.ts')) ?? []),
    join(SRC, 'run-kit.ts'),
  ])
  const found = importCycles(planted).map((c) => c.map((f) => relative(SRC, f)).join(' → '))
  assert.ok(
    found.some((c) => c.includes('run-kit.ts → checks/index.ts → run-kit.ts')),
    found.join('\n'),
  )
})

test('apps/providercheck/src has no import cycle (type-only imports included)', () => {
  const cycles = importCycles(importGraph(SRC)).map((c) => c.map((f) => relative(SRC, f)).join(' → '))
  assert.deepEqual(cycles, [])
})

test('no library module of the kit imports the command line', () => {
  const commandLine = join(SRC, 'command-line.ts')
  // Only the commands may read it: main (argv → run), `providercheck call` (its parsed command) and the package index
  // (which re-exports it).
  const allowed = new Set(['main.ts', 'call-command.ts', 'index.ts', 'cli.ts'].map((f) => join(SRC, f)))
  const importers = [...importGraph(SRC)]
    .filter(([file, deps]) => deps.includes(commandLine) && !allowed.has(file))
    .map(([file]) => relative(SRC, file))
  assert.deepEqual(importers, [])
})
