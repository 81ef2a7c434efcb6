import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { contractValidator, listExamples } from '@tollgate/contract'
import { findSharedData } from '@tollgate/test-support'

// The seed's JSON blocks must be contract examples verbatim. The seed lives in ../shared (read-only, never copied).
const { path: seedFile, skip } = findSharedData('seeds/002_e61001a191572b93.txt')

/** The first complete JSON object in `text` after `marker`, string-aware so braces inside strings don't count. */
function objectAfter(text: string, marker: string): unknown {
  const at = text.indexOf(marker)
  assert.notEqual(at, -1, `marker not in seed: ${marker}`)
  const start = text.indexOf('{', at)
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{') depth++
    else if (c === '}' && --depth === 0) return JSON.parse(text.slice(start, i + 1))
  }
  throw new Error('unbalanced JSON in seed')
}

function example(schema: string, name: string): unknown {
  const ex = listExamples().find((e) => e.valid && e.schema === schema && e.name === name)
  assert.ok(ex, `${schema} ${name}`)
  return JSON.parse(ex.bytes.toString('utf8'))
}

test('the seed`s refund and cancel arguments are valid examples, verbatim', { skip }, () => {
  const seed = readFileSync(seedFile, 'utf8')
  const refundArgs = objectAfter(seed, 'Gerçek bir iadenin argümanları:')
  const cancelArgs = objectAfter(seed, 'dönem sonunda geçerli olacak bir iptalin argümanları:')
  assert.deepEqual(example('tool-inputs.json#/$defs/refund', 'seed'), refundArgs)
  assert.deepEqual(example('tool-inputs.json#/$defs/cancel_subscription', 'seed'), cancelArgs)
  assert.deepEqual(contractValidator('tool-inputs.json#/$defs/refund')(refundArgs), { valid: true })
  assert.deepEqual(contractValidator('tool-inputs.json#/$defs/cancel_subscription')(cancelArgs), { valid: true })
})

test('the seed`s refund result, error envelope and tool-call arguments are valid examples, verbatim', { skip }, () => {
  const seed = readFileSync(seedFile, 'utf8')
  const response = objectAfter(seed, 'Başarılı bir araç çağrısı nesneyi structuredContent içinde döndürür:') as {
    result: { structuredContent: unknown }
  }
  assert.deepEqual(example('refund-result.json', 'seed-succeeded'), response.result.structuredContent)
  const failure = objectAfter(seed, 'Hata, isError: true taşıyan') as { structuredContent: unknown }
  assert.deepEqual(example('error.json', 'amount-exceeds-refundable'), failure.structuredContent)
  const call = objectAfter(seed, 'Araç çağrısının kendisi:') as { params: { arguments: unknown } }
  assert.deepEqual(example('tool-inputs.json#/$defs/get_transaction', 'seed'), call.params.arguments)
})

test('the seed`s published-schema example matches publishedSchema for sr_refund', { skip }, async () => {
  const { PROFILE_TOOLS, publishedSchema } = await import('@tollgate/contract')
  const seed = readFileSync(seedFile, 'utf8')
  const tool = objectAfter(seed, 'Her birini, sözleşmedeki $id değerine işaret eden bir $ref olarak yayımlayın:') as {
    name: string
    inputSchema: unknown
    outputSchema: unknown
  }
  const refund = PROFILE_TOOLS.find((t) => t.name === tool.name)!
  assert.deepEqual(publishedSchema(refund.inputRef), tool.inputSchema)
  assert.deepEqual(publishedSchema(refund.outputRef), tool.outputSchema)
})
