// What a client pays per session to validate one tool result: the SDK's AjvJsonSchemaValidator over the contract
// (compiles the fresh tools/list copy of the schema each time) vs contractJsonSchemaValidator (compiles once).
// Reported as a ratio measured in this run; no absolute target.
import { performance } from 'node:perf_hooks'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv'
import { contractJsonSchemaValidator, createContractAjv, listExamples, publishedSchema } from '@tollgate/contract'

const result = JSON.parse(
  listExamples()
    .find((e) => e.valid && e.schema === 'refund-result.json' && e.name === 'seed-succeeded')!
    .bytes.toString(),
)
const published = JSON.stringify(publishedSchema('refund-result.json'))
const sessions = 300

function run(label: string, validator: { getValidator(schema: object): (input: unknown) => { valid: boolean } }) {
  for (let i = 0; i < 20; i++) validator.getValidator(JSON.parse(published))(result) // warm-up
  const start = performance.now()
  for (let i = 0; i < sessions; i++) {
    const check = validator.getValidator(JSON.parse(published)) // a fresh copy, as from each session's tools/list
    if (!check(result).valid) throw new Error('example rejected')
  }
  const ms = performance.now() - start
  console.log(`${label}: ${(ms / sessions).toFixed(3)} ms per session`)
  return ms
}

const sdk = run('AjvJsonSchemaValidator(createContractAjv())', new AjvJsonSchemaValidator(createContractAjv()))
const ours = run('contractJsonSchemaValidator()', contractJsonSchemaValidator())
console.log(`ratio: contractJsonSchemaValidator is ${(sdk / ours).toFixed(1)}x faster per session (same run)`)
