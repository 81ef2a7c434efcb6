import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { CONTRACT_ERROR_CODES, ERROR_CODES, errorHttpStatus, REFUSAL_CODES, schemaDocuments } from '@tollgate/contract'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const errorsSource = readFileSync(new URL('../src/errors.ts', import.meta.url), 'utf8')

test('the README Errors table and errors.ts list the same ERR_CONTRACT_ codes', () => {
  const section = readme.slice(readme.indexOf('## Errors'))
  const documented = [...section.matchAll(/^\|\s*`(ERR_CONTRACT_[A-Z_]+)`\s*\|/gm)].map((m) => m[1])
  const declared = [...new Set([...errorsSource.matchAll(/'(ERR_CONTRACT_[A-Z_]+)'/g)].map((m) => m[1]))]
  assert.deepEqual([...documented].sort(), [...declared].sort())
  assert.deepEqual([...CONTRACT_ERROR_CODES].sort(), [...declared].sort())
})

test('the README lists every $id and the status of every wire code as errorHttpStatus maps it', () => {
  for (const doc of schemaDocuments) assert.ok(readme.includes(`\`${doc.$id}\``), String(doc.$id))
  for (const code of [...ERROR_CODES, ...REFUSAL_CODES]) {
    // Whitespace-tolerant: the formatter pads table cells.
    assert.match(readme, new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${errorHttpStatus(code)}\\s*\\|`), code)
  }
})

function enums(value: unknown, out: Set<string>): Set<string> {
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === 'enum') for (const v of child as unknown[]) out.add(String(v))
      else enums(child, out)
    }
  }
  return out
}

test('every enumerated value in the schemas is documented in the README', () => {
  const values = enums(schemaDocuments, new Set())
  assert.ok(values.size > 40)
  for (const value of values) assert.ok(readme.includes(`\`${value}\``), value)
})

test('the quick start in examples/ runs and prints what the README says', () => {
  const root = fileURLToPath(new URL('../../../', import.meta.url))
  const run = spawnSync(
    process.execPath,
    ['--conditions=@tollgate/source', '--import', 'tsx', 'packages/contract/examples/quick-start.ts'],
    { cwd: root, encoding: 'utf8' },
  )
  assert.equal(run.status, 0, run.stderr)
  assert.equal(
    run.stdout,
    [
      '{"name":"sr_refund","inputSchema":{"type":"object","$ref":"https://schemas.supportroute.dev/merchant-provider/v1/tool-inputs.json#/$defs/refund"}}',
      'arguments {"valid":true}',
      'float amount {"valid":false,"errors":"/request/amount/amount_minor must be integer"}',
      'result {"valid":true}',
      'amount_exceeds_refundable -> 422',
      '',
    ].join('\n'),
  )
})
