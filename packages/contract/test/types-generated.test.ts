// The committed TypeScript types are what the generator makes from the schemas today, byte for byte; and the
// per-tool type map names the refs PROFILE_TOOLS names.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { PROFILE_TOOLS } from '@tollgate/contract'
import { GENERATE_COMMAND, GENERATED_FILE, generateContractTypes } from '../scripts/generate-types.js'
import { PROFILE_TOOL_REFS } from '../src/tool-types.js'

test('src/types.generated.ts is what scripts/generate-types.ts makes from schemas/ now', async () => {
  const committed = readFileSync(GENERATED_FILE, 'utf8')
  const fresh = await generateContractTypes()
  assert.ok(
    committed === fresh,
    `src/types.generated.ts is out of step with schemas/: run \`${GENERATE_COMMAND}\` and commit the result`,
  )
})

test('every schema document and tool-inputs $def has a type in ContractTypes', async () => {
  const source = await generateContractTypes()
  const block = source.slice(source.indexOf('export interface ContractTypes {'))
  const keys = [...block.slice(0, block.indexOf('\n}')).matchAll(/^ {2}'([^']+)': (\w+)$/gm)].map((m) => m[1])
  const refs = new Set(PROFILE_TOOLS.flatMap((t) => [t.inputRef, t.outputRef]))
  for (const ref of refs) assert.ok(keys.includes(ref), `${ref} has no generated type`)
  assert.ok(keys.includes('money.json') && keys.includes('refund-record.json') && keys.includes('error.json'))
})

test('the tool type map names the same refs as PROFILE_TOOLS', () => {
  const fromProfile = Object.fromEntries(
    PROFILE_TOOLS.map((t) => [t.name, { inputRef: t.inputRef, outputRef: t.outputRef }]),
  )
  assert.deepEqual(JSON.parse(JSON.stringify(PROFILE_TOOL_REFS)), fromProfile)
})

async function schemasCopy(change: (file: string, doc: Record<string, unknown>) => void): Promise<URL> {
  const dir = mkdtempSync(join(tmpdir(), 'contract-schemas-'))
  const source = new URL('../schemas/', import.meta.url)
  for (const file of readdirSync(source)) {
    const doc = JSON.parse(readFileSync(new URL(file, source), 'utf8')) as Record<string, unknown>
    change(file, doc)
    writeFileSync(join(dir, file), JSON.stringify(doc))
  }
  return pathToFileURL(`${dir}/`)
}

test('a changed schema changes the generated source (so the comparison above can fail)', async () => {
  const dir = await schemasCopy((file, doc) => {
    if (file === 'transaction.json') (doc.properties as Record<string, unknown>).risk_score = { type: 'integer' }
  })
  try {
    const changed = await generateContractTypes(dir)
    assert.notEqual(changed, readFileSync(GENERATED_FILE, 'utf8'))
    assert.match(changed, /risk_score\?: number/)
  } finally {
    rmSync(fileURLToPath(dir), { recursive: true, force: true })
  }
})

test('a $ref outside the contract fails the generation instead of being fetched', async () => {
  for (const ref of [
    'https://example.invalid/money.json',
    'https://schemas.supportroute.dev/merchant-provider/v1/no-such.json',
    'no-such.json', // relative to transaction.json's $id: a contract URI, but no such schema
  ]) {
    const dir = await schemasCopy((file, doc) => {
      if (file === 'transaction.json') (doc.properties as Record<string, unknown>).amount = { $ref: ref }
    })
    try {
      await assert.rejects(generateContractTypes(dir), ref)
    } finally {
      rmSync(fileURLToPath(dir), { recursive: true, force: true })
    }
  }
})
