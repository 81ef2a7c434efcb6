import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'
import { CONTRACT_BASE, createContractAjv, schemaDocuments } from '@tollgate/contract'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { LIMITS, measureSchema } from './schema-limits.js'

const BASE = 'https://schemas.supportroute.dev/merchant-provider/v1/'
const schemaDir = new URL('../schemas/', import.meta.url)
const files = readdirSync(schemaDir).filter((f) => f.endsWith('.json'))

test('schemaDocuments holds exactly the files of schemas/, each with $id = base + file name', () => {
  assert.equal(CONTRACT_BASE, BASE)
  assert.deepEqual(schemaDocuments.map((d) => d.$id).sort(), files.map((f) => BASE + f).sort())
})

test('every $id is under the base and unique; every document declares JSON Schema 2020-12', () => {
  const ids = schemaDocuments.map((d) => d.$id as string)
  assert.equal(new Set(ids).size, ids.length)
  for (const doc of schemaDocuments) {
    assert.ok((doc.$id as string).startsWith(BASE), String(doc.$id))
    assert.equal(doc.$schema, 'https://json-schema.org/draft/2020-12/schema', String(doc.$id))
    assert.equal(typeof doc.title, 'string', `${doc.$id} has a title`)
    assert.equal(typeof doc.description, 'string', `${doc.$id} has a description`)
  }
})

test('every schema compiles in strict mode, also in an Ajv built from the bare documents', () => {
  const ajv = createContractAjv()
  for (const doc of schemaDocuments) assert.equal(typeof ajv.getSchema(doc.$id as string), 'function', String(doc.$id))
  // Independent of createContractAjv's options (apart from union types, which nullable fields need).
  const bare = new Ajv2020({ strict: true, allowUnionTypes: true })
  for (const doc of schemaDocuments) bare.addSchema(structuredClone(doc))
  for (const doc of schemaDocuments) assert.ok(bare.getSchema(doc.$id as string), String(doc.$id))
})

test('each schema stays within the profile check limits: 64 KiB, 32 levels, 4096 nodes, 8 $refs; 20000 nodes in all', () => {
  let total = 0
  for (const file of files) {
    const text = readFileSync(new URL(file, schemaDir), 'utf8')
    const size = measureSchema(JSON.parse(text))
    assert.ok(Buffer.byteLength(text) <= LIMITS.bytes && size.bytes <= LIMITS.bytes, `${file}: ${size.bytes} bytes`)
    assert.ok(size.depth <= LIMITS.depth, `${file}: depth ${size.depth}`)
    assert.ok(size.nodes <= LIMITS.nodes, `${file}: ${size.nodes} nodes`)
    assert.ok(size.refs <= LIMITS.refs, `${file}: ${size.refs} $refs`)
    total += size.nodes
  }
  assert.ok(total <= LIMITS.totalNodes, `${total} nodes in all`)
})

function visit(value: unknown, fn: (key: string, child: unknown, atRoot: boolean) => void, atRoot = true): void {
  if (value === null || typeof value !== 'object') return
  for (const [key, child] of Object.entries(value)) {
    fn(key, child, atRoot)
    visit(child, fn, false)
  }
}

test('every $ref is an absolute contract $id (or a fragment of one); no $defs outside tool-inputs.json', () => {
  const ids = new Set(schemaDocuments.map((d) => d.$id))
  for (const doc of schemaDocuments) {
    visit(doc, (key, child, atRoot) => {
      if (key === '$ref') {
        assert.equal(typeof child, 'string')
        assert.ok(ids.has((child as string).split('#')[0]), `${doc.$id}: $ref ${String(child)}`)
      }
      for (const banned of ['definitions', '$anchor', '$dynamicAnchor', '$dynamicRef', '$recursiveRef', 'id']) {
        // 'id' is only banned as a keyword: a property *named* id would sit under "properties" (none do today).
        assert.notEqual(key, banned, `${doc.$id} uses ${banned}`)
      }
      if (key === '$defs') assert.equal(doc.$id, `${BASE}tool-inputs.json`)
      if (key === '$id' && !atRoot) assert.fail(`${doc.$id} has a nested $id`)
    })
  }
})

test('the documents are frozen, so no caller can change the contract another caller validates with', () => {
  const doc = schemaDocuments[0]!
  assert.ok(Object.isFrozen(doc))
  assert.throws(() => {
    ;(doc as Record<string, unknown>).$id = 'https://example.com/x.json'
  }, TypeError)
  assert.ok(Object.isFrozen(schemaDocuments))
})

test('nothing is fetched: no loadSchema, and a ref outside the contract fails to compile synchronously', () => {
  const ajv = createContractAjv()
  assert.equal(ajv.opts.loadSchema, undefined)
  assert.throws(
    () => ajv.compile({ $ref: 'https://schemas.supportroute.dev/merchant-provider/v1/not-there.json' }),
    /can't resolve reference/,
  )
  assert.throws(() => ajv.compile({ $ref: 'https://json-schema.org/draft/2020-12/links' }), /can't resolve reference/)
})

test('createContractAjv never coerces, fills defaults or strips properties', () => {
  const ajv = createContractAjv()
  const validate = ajv.getSchema(`${BASE}money.json`)!
  const money = { amount_minor: '2000', currency: 'USD', extra: 1 }
  assert.equal(validate(money), false)
  assert.deepEqual(money, { amount_minor: '2000', currency: 'USD', extra: 1 })
  assert.equal(ajv.opts.coerceTypes, false)
  assert.equal(ajv.opts.useDefaults, false)
  assert.equal(ajv.opts.removeAdditional, false)
  assert.equal(ajv.opts.strict, true)
})

test('each call to createContractAjv returns a separate instance', () => {
  const a = createContractAjv()
  const b = createContractAjv()
  assert.notEqual(a, b)
  a.removeSchema(`${BASE}money.json`)
  assert.ok(b.getSchema(`${BASE}money.json`))
})
