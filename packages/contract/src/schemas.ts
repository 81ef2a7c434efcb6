import { readdirSync, readFileSync } from 'node:fs'
import { SchemaLoadError, UnknownSchemaError } from './errors.js'

/** The base every contract $id lives under; relative refs resolve against it. */
export const CONTRACT_BASE = 'https://schemas.supportroute.dev/merchant-provider/v1/'

// schemas/ sits beside src/ and dist/, so the same URL works from sources (tests) and from the build.
const schemaDir = new URL('../schemas/', import.meta.url)

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

function loadDocuments(): readonly Record<string, unknown>[] {
  let files: string[]
  try {
    files = readdirSync(schemaDir)
      .filter((f) => f.endsWith('.json'))
      .sort()
  } catch (cause) {
    throw new SchemaLoadError('.', { cause })
  }
  return Object.freeze(
    files.map((file) => {
      let doc: unknown
      try {
        // Our own package files, not wire input: JSON.parse is fine here.
        doc = JSON.parse(readFileSync(new URL(file, schemaDir), 'utf8'))
      } catch (cause) {
        throw new SchemaLoadError(file, { cause })
      }
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new SchemaLoadError(file)
      const id = (doc as Record<string, unknown>).$id
      if (id !== CONTRACT_BASE + file) throw new SchemaLoadError(file)
      return deepFreeze(doc as Record<string, unknown>)
    }),
  )
}

/** Every contract schema document (JSON Schema 2020-12), deep-frozen, sorted by file name; each has its $id. */
export const schemaDocuments: readonly Record<string, unknown>[] = loadDocuments()

const byId = new Map<string, Record<string, unknown>>(schemaDocuments.map((d) => [d.$id as string, d]))

// Keywords whose value is a schema, a map of schemas, or a list of schemas (JSON Schema 2020-12 applicators).
const SCHEMA_KEYWORDS = new Set([
  'items',
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
  'contains',
])
const SCHEMA_MAP_KEYWORDS = new Set(['$defs', 'properties', 'patternProperties', 'dependentSchemas'])
const SCHEMA_LIST_KEYWORDS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems'])

const isSchema = (node: unknown): boolean =>
  typeof node === 'boolean' || (node !== null && typeof node === 'object' && !Array.isArray(node))

/** True when the JSON pointer `fragment` leads from `doc` to a (sub)schema, not to a keyword's value. */
function pointsAtSchema(doc: unknown, fragment: string): boolean {
  if (fragment === '') return true
  if (!fragment.startsWith('/')) return false
  const tokens = fragment
    .slice(1)
    .split('/')
    .map((raw) => decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~'))
  let node: unknown = doc
  for (let i = 0; i < tokens.length; i++) {
    const keyword = tokens[i]!
    if (!isSchema(node) || typeof node === 'boolean' || !Object.hasOwn(node as object, keyword)) return false
    const value = (node as Record<string, unknown>)[keyword]
    if (SCHEMA_KEYWORDS.has(keyword)) {
      node = value
    } else if (SCHEMA_MAP_KEYWORDS.has(keyword) || SCHEMA_LIST_KEYWORDS.has(keyword)) {
      const name = tokens[++i]
      if (name === undefined || value === null || typeof value !== 'object') return false
      if (SCHEMA_LIST_KEYWORDS.has(keyword) !== Array.isArray(value) || !Object.hasOwn(value, name)) return false
      node = (value as Record<string, unknown>)[name]
    } else {
      return false
    }
  }
  return isSchema(node)
}

/**
 * Resolves a contract ref ('tool-inputs.json#/$defs/refund', 'refund-result.json') to its absolute URI;
 * an absolute contract URI passes through unchanged. Throws UnknownSchemaError (ERR_CONTRACT_UNKNOWN_SCHEMA)
 * when the ref names no contract document or no schema inside it.
 */
export function contractRef(ref: string): string {
  if (typeof ref !== 'string') throw new UnknownSchemaError()
  const absolute = /^[a-z][a-z0-9+.-]*:/i.test(ref) ? ref : CONTRACT_BASE + ref
  if (!absolute.startsWith(CONTRACT_BASE)) throw new UnknownSchemaError()
  const hash = absolute.indexOf('#')
  const id = hash === -1 ? absolute : absolute.slice(0, hash)
  const doc = byId.get(id)
  if (doc === undefined) throw new UnknownSchemaError()
  if (hash !== -1) {
    let found: boolean
    try {
      found = pointsAtSchema(doc, absolute.slice(hash + 1))
    } catch {
      found = false // a malformed %-escape in the fragment
    }
    if (!found) throw new UnknownSchemaError()
  }
  return absolute
}

/** What a profile tool publishes as inputSchema/outputSchema: `{"type":"object","$ref":"<absolute $id>"}`. */
export function publishedSchema(ref: string): { type: 'object'; $ref: string } {
  return { type: 'object', $ref: contractRef(ref) }
}
