import { contractRef, listExamples, PROFILE_TOOLS, type ProfileTool, schemaDocuments } from '@tollgate/contract'
import type { ToolListing } from '@tollgate/platform-client'
import { parsePlain } from '@tollgate/strict-json'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { CheckFailure } from '../errors.js'
import { canonicalJson } from '../rfc8785-canonical-json.js'
import { PLATFORM_ARGUMENTS } from './platform-arguments.js'
import { contractIds, limitProblems, measureSchema, SCHEMA_LIMITS } from './schema-limits.js'

interface ListedTool {
  name: string
  inputSchema?: unknown
  outputSchema?: unknown
}

/**
 * Judges a tools/list against the MCP profile, in the seed's order of codes: mcp_tool_list_too_long,
 * mcp_tool_duplicated, mcp_tool_missing, mcp_schema_too_complex, mcp_schema_incompatible. Throws CheckFailure
 * with the first code that applies (its reason names up to three problems); returns a pass reason.
 */
export function judgeProfile(listing: ToolListing, capabilities: Record<string, boolean>): string {
  if (listing.truncated || listing.pages.length > SCHEMA_LIMITS.maxPages) {
    throw new CheckFailure('mcp_tool_list_too_long', `tools/list needs more than ${SCHEMA_LIMITS.maxPages} pages`)
  }
  const listed = listing.pages.flatMap((p) => p.tools).map(asTool)
  const seen = new Map<string, number>()
  for (const t of listed) seen.set(t.name, (seen.get(t.name) ?? 0) + 1)
  const duplicated = [...seen].filter(([, n]) => n > 1).map(([name]) => name)
  if (duplicated.length > 0)
    throw new CheckFailure('mcp_tool_duplicated', `listed more than once: ${duplicated.join(', ')}`)

  const expected = PROFILE_TOOLS.filter((t) => t.capability === undefined || capabilities[t.capability] === true)
  const missing = expected.filter((t) => !seen.has(t.name))
  if (missing.length > 0) {
    const why = missing.map((t) => (t.capability ? `${t.name} (capability ${t.capability})` : t.name))
    throw new CheckFailure('mcp_tool_missing', `not listed: ${why.join(', ')}`)
  }
  // Only profile tools are judged; the platform ignores every other tool a server lists.
  const profile = expected.map((p) => ({ profile: p, tool: listed.find((t) => t.name === p.name) as ListedTool }))

  const ids = contractIds()
  const tooComplex: string[] = []
  let totalNodes = 0
  for (const { tool } of profile) {
    for (const side of ['inputSchema', 'outputSchema'] as const) {
      const schema = tool[side]
      if (schema === undefined) continue
      const measure = measureSchema(schema)
      totalNodes += measure.nodes
      if (contractCopy(schema) !== undefined) continue
      for (const problem of limitProblems(measure, ids)) tooComplex.push(`${tool.name} ${side}: ${problem}`)
    }
  }
  if (totalNodes > SCHEMA_LIMITS.maxTotalNodes)
    tooComplex.push(`all schemas together: ${totalNodes} nodes (limit 20000)`)
  if (tooComplex.length > 0) throw new CheckFailure('mcp_schema_too_complex', summary(tooComplex))

  // One fresh Ajv per profile check, holding only the contract's documents by $id ($id is refused above unless
  // the schema is an identical copy, which is judged as the document itself: no published schema can add or
  // shadow a document).
  const ajv = judgingAjv()
  const incompatible: string[] = []
  for (const { profile: p, tool } of profile) incompatible.push(...compatibility(ajv, p, tool))
  if (incompatible.length > 0) throw new CheckFailure('mcp_schema_incompatible', summary(incompatible))
  return `${listed.length} tools on ${listing.pages.length} page(s); ${profile.length} profile tools within limits and compatible`
}

function compatibility(ajv: Ajv2020, p: ProfileTool, tool: ListedTool): string[] {
  const problems: string[] = []
  for (const side of ['inputSchema', 'outputSchema'] as const) {
    const schema = tool[side]
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      problems.push(`${tool.name} declares no ${side}`)
      continue
    }
    let validate: ReturnType<typeof ajv.compile>
    try {
      const copyOf = contractCopy(schema)
      validate = ajv.compile(copyOf === undefined ? schema : { $ref: copyOf })
    } catch {
      problems.push(`${tool.name} ${side} does not compile against the contract`)
      continue
    }
    if (side === 'inputSchema') {
      if ((schema as { type?: unknown }).type !== 'object')
        problems.push(`${tool.name} inputSchema root is not type object`)
      const samples = PLATFORM_ARGUMENTS[p.name] ?? []
      samples.forEach((sample, i) => {
        if (!validate(sample)) problems.push(`${tool.name} inputSchema rejects platform argument object #${i + 1}`)
      })
      // The contract's valid argument examples are objects the platform may send too.
      for (const example of validExamples(p.inputRef)) {
        if (!validate(example.value))
          problems.push(`${tool.name} inputSchema rejects the contract example ${example.name}`)
      }
    } else {
      for (const example of validExamples(p.outputRef)) {
        if (!validate(example.value))
          problems.push(`${tool.name} outputSchema rejects the contract example ${example.name}`)
      }
    }
  }
  return problems
}

/**
 * Published schemas are judged as JSON Schema 2020-12 defines them, not by Ajv's strict authoring rules (which
 * the contract's own schemas follow): an annotation keyword such as x-order, `required` beside an allOf, or
 * `pattern` without `type` are valid schemas, and refusing them would blame the provider for the kit's validator.
 * Formats are annotations (2020-12 default); no logger, so nothing reaches the kit's output.
 */
function judgingAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    strict: false,
    allowUnionTypes: true,
    validateFormats: false,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    logger: false,
  })
  for (const doc of schemaDocuments) ajv.addSchema(doc)
  return ajv
}

/**
 * The seed: a verbatim copy of a contract document, published under our $id, passes for as long as it is
 * identical to the document; once they differ (even in a description) it is a schema of its own, and its $id
 * is forbidden. Returns the $id of the document an identical copy stands for.
 */
function contractCopy(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined
  const id = (schema as { $id?: unknown }).$id
  if (typeof id !== 'string') return undefined
  const doc = schemaDocuments.find((d) => d.$id === id)
  return doc !== undefined && canonicalJson(doc) === canonicalJson(schema) ? id : undefined
}

function validExamples(ref: string): { name: string; value: unknown }[] {
  const id = contractRef(ref)
  return listExamples()
    .filter((e) => e.valid && contractRef(e.schema) === id)
    .map((e) => ({ name: e.name, value: parsePlain(e.bytes, { maxBytes: 1024 * 1024, maxDepth: 64 }) }))
}

function asTool(value: unknown): ListedTool {
  if (typeof value !== 'object' || value === null || typeof (value as { name?: unknown }).name !== 'string') {
    throw new CheckFailure('mcp_tool_missing', 'tools/list holds an entry without a name')
  }
  return value as ListedTool
}

function summary(problems: string[]): string {
  const more = problems.length > 3 ? ` (+${problems.length - 3} more)` : ''
  return problems.slice(0, 3).join('; ') + more
}
