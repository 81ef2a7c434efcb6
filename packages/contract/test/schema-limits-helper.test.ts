import assert from 'node:assert/strict'
import { test } from 'node:test'
import { measureSchema } from './schema-limits.js'

// The counting helper is itself tested, so a wrong count cannot hide a schema over the limits.
test('measureSchema counts values, object/array nesting and $ref keys', () => {
  assert.deepEqual(measureSchema({}), { bytes: 2, depth: 1, nodes: 1, refs: 0 })
  assert.deepEqual(measureSchema({ a: 1, b: [true, null] }), { bytes: 23, depth: 2, nodes: 5, refs: 0 })
  const doc = { properties: { x: { $ref: 'a.json' }, y: { items: { $ref: 'b.json' } } } }
  const size = measureSchema(doc)
  assert.equal(size.depth, 4)
  assert.equal(size.refs, 2)
  assert.equal(size.nodes, 7)
})
