import { schemaDocuments } from '@tollgate/contract'

/** The seed's limits on one published schema and on all of them together. */
export const SCHEMA_LIMITS = {
  maxBytes: 64 * 1024,
  maxDepth: 32,
  maxNodes: 4096,
  maxRefs: 8,
  maxTotalNodes: 20_000,
  maxPages: 5,
  profileBudgetMs: 15_000,
} as const

/** Keywords a published schema may not use: local structures and identifiers. */
export const FORBIDDEN_KEYWORDS = [
  '$defs',
  'definitions',
  '$id',
  'id',
  '$anchor',
  '$dynamicAnchor',
  '$recursiveAnchor',
  '$dynamicRef',
  '$recursiveRef',
] as const

export interface SchemaMeasure {
  bytes: number
  depth: number
  nodes: number
  refs: string[]
  forbidden: string[]
}

// Keywords whose value is a map of names to subschemas, a single subschema, or a list of subschemas: only
// these are walked as schemas, so a property *named* "id" is not mistaken for the keyword.
// `dependencies` is draft-07's form of dependentSchemas (its array values are skipped: they are not schemas).
const SCHEMA_MAPS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  'dependencies',
  '$defs',
  'definitions',
])
const SCHEMA_ONE = new Set([
  'additionalProperties',
  'items',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
  'contentSchema',
])
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'])

/** Measures one published schema: serialized size, JSON depth, node count, $refs and forbidden keywords. */
export function measureSchema(schema: unknown): SchemaMeasure {
  const refs: string[] = []
  const forbidden = new Set<string>()
  walkSchema(schema, refs, forbidden)
  return {
    bytes: Buffer.byteLength(JSON.stringify(schema) ?? '', 'utf8'),
    depth: jsonDepth(schema),
    nodes: jsonNodes(schema),
    refs,
    forbidden: [...forbidden],
  }
}

/** The contract's schema $ids; a published $ref must name one of them (a fragment may follow). */
export function contractIds(): Set<string> {
  return new Set(schemaDocuments.map((d) => String(d.$id)))
}

/** The problems of one schema against the limits, in words (empty when it is within them). */
export function limitProblems(measure: SchemaMeasure, ids: Set<string>): string[] {
  const problems: string[] = []
  if (measure.bytes > SCHEMA_LIMITS.maxBytes) problems.push(`${measure.bytes} bytes (limit 65536)`)
  if (measure.depth > SCHEMA_LIMITS.maxDepth) problems.push(`${measure.depth} levels deep (limit 32)`)
  if (measure.nodes > SCHEMA_LIMITS.maxNodes) problems.push(`${measure.nodes} nodes (limit 4096)`)
  if (measure.refs.length > SCHEMA_LIMITS.maxRefs) problems.push(`${measure.refs.length} $refs (limit 8)`)
  for (const keyword of measure.forbidden) problems.push(`uses ${keyword}`)
  for (const ref of measure.refs) {
    const base = ref.split('#')[0] ?? ''
    if (!ids.has(base)) problems.push(`$ref ${truncate(ref)} is not a contract $id`)
  }
  return problems
}

function walkSchema(node: unknown, refs: string[], forbidden: Set<string>): void {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return
  for (const [key, value] of Object.entries(node)) {
    if ((FORBIDDEN_KEYWORDS as readonly string[]).includes(key)) forbidden.add(key)
    if (key === '$ref') refs.push(typeof value === 'string' ? value : '(not a string)')
    if (SCHEMA_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const sub of Object.values(value)) walkSchema(sub, refs, forbidden)
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      for (const sub of value) walkSchema(sub, refs, forbidden)
    } else if (SCHEMA_ONE.has(key)) {
      walkSchema(value, refs, forbidden)
    }
  }
}

// Iterative: a hostile schema must not overflow the stack.
function jsonDepth(root: unknown): number {
  let max = 0
  const stack: [unknown, number][] = [[root, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    if (typeof node !== 'object' || node === null) continue
    if (depth > max) max = depth
    for (const child of Object.values(node)) stack.push([child, depth + 1])
  }
  return max
}

function jsonNodes(root: unknown): number {
  let count = 0
  const stack: unknown[] = [root]
  while (stack.length > 0) {
    const node = stack.pop()
    count += 1
    if (typeof node === 'object' && node !== null) for (const child of Object.values(node)) stack.push(child)
  }
  return count
}

function truncate(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text
}
