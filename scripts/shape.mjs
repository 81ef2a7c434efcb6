#!/usr/bin/env node
// Shape report for the source under apps/*/src and packages/*/src: file lengths, function
// lengths and how many modules each file imports. `--check` exits 1 when a limit is passed
// (450 lines a file, 100 lines a function, 15 imports a module); the exceptions are named below.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

const root = new URL('..', import.meta.url).pathname
const LIMITS = { fileLines: 450, functionLines: 100, imports: 15 }
/** Generated code and the hand-written strict reader are exempt from the file limit. */
const LONG_FILES_ALLOWED = new Set([
  'packages/contract/src/types.generated.ts',
  'packages/strict-json/src/parse-strict.ts',
])
/** Data tables, exempt from the function limit: the demo ledger's invented customers, charges and subscriptions. */
const LONG_FUNCTIONS_ALLOWED = new Set(['apps/provider/src/billing/fixtures.ts demoFixtures'])

function* sourceFiles(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) yield* sourceFiles(path)
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield path
  }
}

const files = []
for (const group of ['apps', 'packages']) {
  for (const pkg of readdirSync(join(root, group))) {
    const src = join(root, group, pkg, 'src')
    try {
      if (statSync(src).isDirectory()) files.push(...sourceFiles(src))
    } catch {}
  }
}

const rows = []
const functions = []
for (const path of files) {
  const text = readFileSync(path, 'utf8')
  const file = relative(root, path)
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const specifiers = new Set()
  const lineOf = (pos) => sf.getLineAndCharacterOfPosition(pos).line
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      specifiers.add(node.moduleSpecifier.text)
    }
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      ts.isStringLiteral(node.arguments[0] ?? {})
    ) {
      specifiers.add(node.arguments[0].text)
    }
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const lines = lineOf(node.end) - lineOf(node.getStart(sf)) + 1
      const name =
        node.name?.getText(sf) ?? (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(sf) : '(anonymous)')
      functions.push({ file, name, line: lineOf(node.getStart(sf)) + 1, lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  rows.push({ file, lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0), imports: specifiers.size })
}

const check = process.argv.includes('--check')
const problems = []
for (const r of rows) {
  if (r.lines > LIMITS.fileLines && !LONG_FILES_ALLOWED.has(r.file))
    problems.push(`${r.file}: ${r.lines} lines (limit ${LIMITS.fileLines})`)
  if (r.imports > LIMITS.imports) problems.push(`${r.file}: imports ${r.imports} modules (limit ${LIMITS.imports})`)
}
for (const f of functions) {
  if (f.lines > LIMITS.functionLines && !LONG_FUNCTIONS_ALLOWED.has(`${f.file} ${f.name}`))
    problems.push(`${f.file}:${f.line} ${f.name}: ${f.lines} lines (limit ${LIMITS.functionLines})`)
}
const lengths = rows.map((r) => r.lines).sort((a, b) => a - b)
console.log(
  `${rows.length} files, median ${lengths[Math.floor(lengths.length / 2)]} lines; ${rows.filter((r) => r.lines > 400).length} over 400; ${functions.filter((f) => f.lines > 100).length} functions over 100 lines`,
)
if (!check || process.argv.includes('--verbose')) {
  console.log('\nlongest files:')
  for (const r of [...rows].sort((a, b) => b.lines - a.lines).slice(0, 15))
    console.log(`  ${String(r.lines).padStart(5)}  ${r.file}`)
  console.log('\nlongest functions:')
  for (const f of [...functions].sort((a, b) => b.lines - a.lines).slice(0, 25))
    console.log(`  ${String(f.lines).padStart(5)}  ${f.file}:${f.line} ${f.name}`)
  console.log('\nmost imports:')
  for (const r of [...rows].sort((a, b) => b.imports - a.imports).slice(0, 10))
    console.log(`  ${String(r.imports).padStart(5)}  ${r.file}`)
}
if (problems.length > 0) {
  console.log(`\n${problems.length} over the limits:`)
  for (const p of problems) console.log(`  ${p}`)
  if (check) process.exit(1)
}
