import assert from 'node:assert/strict'
import { test } from 'node:test'
import { contractValidator, schemaDocuments } from '@tollgate/contract'
import type { ToolListing } from '@tollgate/platform-client'
import {
  CheckFailure,
  FORBIDDEN_KEYWORDS,
  judgeProfile,
  limitProblems,
  measureSchema,
  PLATFORM_ARGUMENTS,
  SCHEMA_LIMITS,
} from '../src/index.js'

const BASE = 'https://schemas.supportroute.dev/merchant-provider/v1/'
const TABLE: [string, string, string][] = [
  ['sr_describe', 'tool-inputs.json#/$defs/describe', 'describe.json'],
  ['sr_find_customers', 'customer-query.json', 'customer-candidates.json'],
  ['sr_get_customer', 'tool-inputs.json#/$defs/get_customer', 'customer.json'],
  ['sr_list_transactions', 'tool-inputs.json#/$defs/list_transactions', 'transaction-list.json'],
  ['sr_get_transaction', 'tool-inputs.json#/$defs/get_transaction', 'transaction.json'],
  ['sr_get_subscription', 'tool-inputs.json#/$defs/get_subscription', 'subscription.json'],
  ['sr_refund', 'tool-inputs.json#/$defs/refund', 'refund-result.json'],
  ['sr_cancel_subscription', 'tool-inputs.json#/$defs/cancel_subscription', 'cancel-result.json'],
  ['sr_get_operation', 'tool-inputs.json#/$defs/get_operation', 'operation.json'],
]
const CAPS = { partial_refunds: true, cancel_subscription: true, cancel_at_period_end: true, outcome_callbacks: false }

function published() {
  return TABLE.map(([name, input, output]) => ({
    name,
    inputSchema: { type: 'object', $ref: BASE + input },
    outputSchema: { type: 'object', $ref: BASE + output },
  }))
}
function listing(tools: unknown[], pages = 1): ToolListing {
  return {
    era: '2026-07-28',
    pages: Array.from({ length: pages }, (_, i) => ({ tools: i === 0 ? tools : [], nextCursor: undefined })),
    truncated: false,
  }
}
function reasonOf(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    if (e instanceof CheckFailure) return `${e.failureCode}: ${e.message}`
    throw e
  }
  return 'pass'
}
function codeOf(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    if (e instanceof CheckFailure) return e.failureCode
    throw e
  }
  return 'pass'
}

test('the seed-shaped published schemas pass the profile', () => {
  assert.equal(
    codeOf(() => judgeProfile(listing(published()), CAPS)),
    'pass',
  )
})

test('the argument objects the kit sends are valid under the contract itself', () => {
  const refs: Record<string, string> = Object.fromEntries(TABLE.map(([n, i]) => [n, i]))
  refs.sr_list_payment_attempts = 'payment-attempt-query.json'
  for (const [tool, samples] of Object.entries(PLATFORM_ARGUMENTS)) {
    for (const sample of samples)
      assert.deepEqual(contractValidator(refs[tool] as string)(sample), { valid: true }, tool)
  }
})

test('a property named id is not the keyword; a $defs or $id keyword is', () => {
  const ok = measureSchema({ type: 'object', properties: { id: { type: 'string' }, $defs: { type: 'string' } } })
  assert.deepEqual(ok.forbidden, [])
  const bad = measureSchema({ type: 'object', $id: 'x', properties: { a: { $defs: {}, type: 'string' } } })
  assert.deepEqual(bad.forbidden.sort(), ['$defs', '$id'])
  // Inside every kind of subschema position, draft-07 dependencies included.
  const hidden = measureSchema({
    type: 'object',
    dependencies: { a: ['b'], c: { $anchor: 'x' } },
    prefixItems: [{ definitions: {} }],
    if: { $dynamicRef: '#x' },
  })
  assert.deepEqual(hidden.forbidden.sort(), ['$anchor', '$dynamicRef', 'definitions'])
})

test('limits: depth over 32, more than 8 $refs, a $ref outside the contract', () => {
  let deep: Record<string, unknown> = { type: 'string' }
  for (let i = 0; i < 32; i += 1) deep = { type: 'object', properties: { a: deep } }
  const ids = new Set([`${BASE}refund-result.json`])
  assert.match(limitProblems(measureSchema(deep), ids).join(), /levels deep/)
  const refs = { anyOf: Array.from({ length: 9 }, () => ({ $ref: `${BASE}refund-result.json` })) }
  assert.match(limitProblems(measureSchema(refs), ids).join(), /9 \$refs/)
  assert.match(limitProblems(measureSchema({ $ref: 'https://example.com/x.json' }), ids).join(), /not a contract \$id/)
  assert.deepEqual(limitProblems(measureSchema({ $ref: `${BASE}refund-result.json#/properties/amount` }), ids), [])
})

test('a narrower closed outputSchema is incompatible: it rejects the contract examples', () => {
  const tools = published()
  ;(tools[6] as { outputSchema: unknown }).outputSchema = {
    type: 'object',
    additionalProperties: false,
    required: ['status'],
    properties: { status: { type: 'string' } },
  }
  assert.match(
    reasonOf(() => judgeProfile(listing(tools), CAPS)),
    /^mcp_schema_incompatible: sr_refund outputSchema rejects the contract example /,
  )
})

test('an inputSchema that rejects a dry run (no key) is incompatible, and the reason says so', () => {
  const tools = published()
  ;(tools[6] as { inputSchema: unknown }).inputSchema = {
    type: 'object',
    required: ['idempotency_key', 'request'],
    allOf: [{ $ref: `${BASE}tool-inputs.json#/$defs/refund` }],
  }
  assert.equal(
    reasonOf(() => judgeProfile(listing(tools), CAPS)),
    'mcp_schema_incompatible: sr_refund inputSchema rejects platform argument object #2; sr_refund inputSchema rejects the contract example dry-run',
  )
})

test('valid 2020-12 that a strict authoring validator refuses is judged on what it accepts', () => {
  // An annotation keyword, `required` beside an allOf, `pattern` without `type`, a format: all legal schemas.
  const tools = published()
  ;(tools[6] as { inputSchema: unknown }).inputSchema = {
    type: 'object',
    'x-order': 1,
    required: ['request'],
    allOf: [{ $ref: `${BASE}tool-inputs.json#/$defs/refund` }],
    properties: { idempotency_key: { pattern: ':refund:' }, note: { format: 'no-such-format' } },
  }
  assert.equal(
    reasonOf(() => judgeProfile(listing(tools), CAPS)),
    'pass',
  )
})

test("an inputSchema narrower than the contract's own argument examples is incompatible", () => {
  // Accepts every argument object the kit itself sends (order_ref ord_1001) but not the contract's ord_1.
  const tools = published()
  ;(tools[1] as { inputSchema: unknown }).inputSchema = {
    type: 'object',
    $ref: `${BASE}customer-query.json`,
    properties: { order_ref: { type: 'string', pattern: '^ord_[0-9]{4}$' } },
  }
  try {
    judgeProfile(listing(tools), CAPS)
    assert.fail('the profile passed')
  } catch (e) {
    assert.ok(e instanceof CheckFailure)
    assert.equal(e.failureCode, 'mcp_schema_incompatible')
    assert.equal(e.message, 'sr_find_customers inputSchema rejects the contract example every-identifier')
  }
})

test('a verbatim copy of a contract document under its $id passes; a copy that differs at all is refused', () => {
  const doc = schemaDocuments.find((d) => d.$id === `${BASE}refund-result.json`)
  assert.ok(doc)
  const tools = published()
  ;(tools[6] as { outputSchema: unknown }).outputSchema = structuredClone(doc)
  assert.equal(
    reasonOf(() => judgeProfile(listing(tools), CAPS)),
    'pass',
  )
  ;(tools[6] as { outputSchema: unknown }).outputSchema = { ...structuredClone(doc), description: 'our own words' }
  assert.equal(
    reasonOf(() => judgeProfile(listing(tools), CAPS)),
    'mcp_schema_too_complex: sr_refund outputSchema: uses $id',
  )
})

test('an output schema pointing at another contract document is incompatible', () => {
  const tools = published()
  ;(tools[6] as { outputSchema: unknown }).outputSchema = { type: 'object', $ref: `${BASE}customer.json` }
  assert.match(
    reasonOf(() => judgeProfile(listing(tools), CAPS)),
    /^mcp_schema_incompatible: sr_refund outputSchema rejects the contract example /,
  )
})

test('capability tools are required only when describe declares the capability', () => {
  const withoutCancel = published().filter(
    (t) => t.name !== 'sr_cancel_subscription' && t.name !== 'sr_get_subscription',
  )
  assert.equal(
    codeOf(() => judgeProfile(listing(withoutCancel), { ...CAPS, cancel_subscription: false })),
    'pass',
  )
  assert.equal(
    codeOf(() => judgeProfile(listing(withoutCancel), CAPS)),
    'mcp_tool_missing',
  )
  assert.equal(
    codeOf(() => judgeProfile(listing(published()), { ...CAPS, payment_attempts: true })),
    'mcp_tool_missing',
  )
})

test('tools outside the profile are ignored, whatever their schemas', () => {
  const extra = { name: 'internal_debug', inputSchema: { type: 'object', $defs: { a: {} } } }
  assert.equal(
    codeOf(() => judgeProfile(listing([...published(), extra]), CAPS)),
    'pass',
  )
})

test('a list on more than five pages is too long; five pages are fine', () => {
  assert.equal(
    codeOf(() => judgeProfile(listing(published(), 5), CAPS)),
    'pass',
  )
  assert.equal(
    codeOf(() => judgeProfile({ ...listing(published(), 6), truncated: true }, CAPS)),
    'mcp_tool_list_too_long',
  )
})

test('all profile schemas together over 20,000 nodes are too complex', () => {
  const tools = published()
  const big = { type: 'object', $ref: `${BASE}customer.json`, examples: Array.from({ length: 4000 }, (_, i) => i) }
  for (const t of tools) (t as { inputSchema: unknown }).inputSchema = big
  assert.equal(
    codeOf(() => judgeProfile(listing(tools), CAPS)),
    'mcp_schema_too_complex',
  )
})

test("the seed's limits are pinned, and each one is exact: at the limit passes, one over fails", () => {
  assert.deepEqual(
    { ...SCHEMA_LIMITS },
    {
      maxBytes: 65536,
      maxDepth: 32,
      maxNodes: 4096,
      maxRefs: 8,
      maxTotalNodes: 20000,
      maxPages: 5,
      profileBudgetMs: 15000,
    },
  )
  assert.deepEqual(
    [...FORBIDDEN_KEYWORDS],
    [
      '$defs',
      'definitions',
      '$id',
      'id',
      '$anchor',
      '$dynamicAnchor',
      '$recursiveAnchor',
      '$dynamicRef',
      '$recursiveRef',
    ],
  )
  const ids = new Set([`${BASE}refund-result.json`])
  const problems = (schema: unknown) => limitProblems(measureSchema(schema), ids)
  // Depth: n nested objects are n levels.
  const nested = (n: number): unknown => (n === 1 ? { type: 'string' } : { not: nested(n - 1) })
  assert.deepEqual(problems(nested(32)), [])
  assert.deepEqual(problems(nested(33)), ['33 levels deep (limit 32)'])
  // Nodes: the root, the enum array and its items.
  const nodes = (n: number) => ({ enum: Array.from({ length: n - 2 }, () => 0) })
  assert.deepEqual(problems(nodes(4096)), [])
  assert.deepEqual(problems(nodes(4097)), ['4097 nodes (limit 4096)'])
  // Bytes of the serialized schema: {"description":"…"} is 18 bytes around the text.
  const bytes = (n: number) => ({ description: 'x'.repeat(n - 18) })
  assert.deepEqual(problems(bytes(65536)), [])
  assert.deepEqual(problems(bytes(65537)), ['65537 bytes (limit 65536)'])
  const refs = (n: number) => ({ anyOf: Array.from({ length: n }, () => ({ $ref: `${BASE}refund-result.json` })) })
  assert.deepEqual(problems(refs(8)), [])
  assert.deepEqual(problems(refs(9)), ['9 $refs (limit 8)'])
})

test('all profile schemas together: 20,000 nodes pass, 20,001 are too complex', () => {
  const padded = (total: number) => {
    const tools = published()
    const base = tools.reduce((n, t) => n + measureSchema(t.inputSchema).nodes + measureSchema(t.outputSchema).nodes, 0)
    // Spread the extra nodes over six inputSchemas (each stays under 4,096): an examples array adds 1 + items.
    let extra = total - base
    for (const t of tools.slice(0, 6)) {
      const add = Math.min(extra, 4000)
      if (add === 0) break
      ;(t.inputSchema as Record<string, unknown>).examples = Array.from({ length: add - 1 }, () => ({}))
      extra -= add
    }
    assert.equal(extra, 0)
    return tools
  }
  assert.equal(
    reasonOf(() => judgeProfile(listing(padded(20000)), CAPS)),
    'pass',
  )
  assert.equal(
    reasonOf(() => judgeProfile(listing(padded(20001)), CAPS)),
    'mcp_schema_too_complex: all schemas together: 20001 nodes (limit 20000)',
  )
})
