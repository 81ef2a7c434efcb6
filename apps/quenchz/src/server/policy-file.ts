// The --budget-policy file, read by the strict JSON reader: a key given twice in one object is refused (JSON.parse
// would let the last one silently win), and the problem names where, as a path through the policy's own field names;
// a caller's sub is named only by its place in `callers`, and no value of the file is ever repeated.
import { readFileSync, statSync } from 'node:fs'
import { JsonNumber, type JsonValue, parseStrict, StrictJsonError } from '@tollgate/strict-json'

/** Largest --budget-policy file read, bytes (100 000 listed callers fit well within). */
export const MAX_POLICY_FILE_BYTES = 16 * 1024 * 1024
/** Deepest nesting a policy needs is 3 (policy, callers, entry); a little room for a wrong file to be named as such. */
const MAX_POLICY_DEPTH = 16

/** The fields a policy names at each level: shown by name in a path; any other key is shown by its position. */
const TOP_FIELDS = new Set(['reserve', 'pool', 'windowSeconds', 'unlistedCallers', 'callers'])
const ENTRY_FIELDS = new Set(['reserve'])

/** The policy file as a JSON object, or a one-line reason naming neither the file's values nor a caller's sub. */
export function readPolicyFile(file: string): Record<string, unknown> | string {
  let bytes: Buffer
  try {
    if (statSync(file).size > MAX_POLICY_FILE_BYTES)
      return `the file is larger than ${MAX_POLICY_FILE_BYTES / 1024 / 1024} MiB`
    bytes = readFileSync(file)
  } catch (error) {
    return `cannot read the file (${(error as { code?: string }).code ?? 'unreadable'})`
  }
  let value: JsonValue
  try {
    value = parseStrict(bytes, { maxBytes: MAX_POLICY_FILE_BYTES, maxDepth: MAX_POLICY_DEPTH })
  } catch (error) {
    if (!(error instanceof StrictJsonError)) throw error
    if (error.code === 'ERR_STRICT_JSON_DUPLICATE_KEY' && error.offset !== undefined)
      return `${duplicatePath(bytes, error.offset)} is given twice in one object (duplicate key)`
    if (error.code === 'ERR_STRICT_JSON_TOO_DEEP') return `the file nests deeper than ${MAX_POLICY_DEPTH} levels`
    if (error.code === 'ERR_STRICT_JSON_BOM') return 'the file starts with a byte order mark; save it as UTF-8 without'
    if (error.code === 'ERR_STRICT_JSON_INVALID_UTF8') return 'the file is not UTF-8'
    return 'the file is not JSON'
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof JsonNumber)
    return 'a budget policy must be a JSON object'
  return plain(value) as Record<string, unknown>
}

/** Numbers as JS numbers (an integer past 2^53 becomes an unsafe one, which the policy's bounds then refuse). */
function plain(value: JsonValue): unknown {
  if (value instanceof JsonNumber) return value.toNumber()
  if (Array.isArray(value)) return value.map(plain)
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = Object.create(null)
  for (const key of Object.keys(value)) out[key] = plain(value[key] as JsonValue)
  return out
}

/** Where in a policy a container sits: the policy itself, its `callers`, one caller's entry, or anywhere else. */
type Place = 'policy' | 'callers' | 'entry' | 'other'

interface Frame {
  kind: 'object' | 'array'
  place: Place
  /** Object: the last member name read, and how many members so far; array: the index of the element being read. */
  key: string | undefined
  count: number
  expectingKey: boolean
}

/** A member of a container at `place`, as a path segment: a field name the policy knows, else its position. */
function segment(frame: Frame): string {
  if (frame.kind === 'array') return `[${frame.count}]`
  if (frame.place === 'callers') return ` (entry ${frame.count})`
  const known = frame.place === 'policy' ? TOP_FIELDS : frame.place === 'entry' ? ENTRY_FIELDS : undefined
  return known?.has(frame.key as string) === true ? `.${frame.key}` : ` (member ${frame.count})`
}

/** The place of a container opened as the current member of `parent`. */
function placeIn(parent: Frame | undefined): Place {
  if (parent === undefined) return 'policy'
  if (parent.kind === 'object' && parent.place === 'policy' && parent.key === 'callers') return 'callers'
  if (parent.kind === 'object' && parent.place === 'callers') return 'entry'
  return 'other'
}

/**
 * Where the duplicate key starting at `byteOffset` sits: `reserve`, `callers (entry 3)`, `callers (entry 1).reserve`.
 * The text before it is valid JSON so far (the strict reader got that far), so a small scan of brackets, commas and
 * strings finds the path.
 */
export function duplicatePath(bytes: Uint8Array, byteOffset: number): string {
  const text = Buffer.from(bytes.subarray(0, byteOffset)).toString('utf8')
  const rest = Buffer.from(bytes.subarray(byteOffset)).toString('utf8')
  const stack: Frame[] = []
  const open = (kind: Frame['kind']) =>
    stack.push({ kind, place: placeIn(stack.at(-1)), key: undefined, count: 0, expectingKey: kind === 'object' })
  let i = 0
  while (i < text.length) {
    const c = text[i] as string
    const top = stack.at(-1)
    if (c === '"') {
      const end = stringEnd(text, i)
      if (top?.kind === 'object' && top.expectingKey) {
        top.key = JSON.parse(text.slice(i, end)) as string
        top.count++
        top.expectingKey = false
      }
      i = end
      continue
    }
    if (c === '{') open('object')
    else if (c === '[') open('array')
    else if (c === '}' || c === ']') stack.pop()
    else if (c === ',' && top !== undefined) {
      if (top.kind === 'array') top.count++
      else top.expectingKey = true
    }
    i++
  }
  const innermost = stack.at(-1)
  if (innermost?.kind === 'object') {
    innermost.key = JSON.parse(rest.slice(0, stringEnd(rest, 0))) as string
    innermost.count++
  }
  const path = stack.map(segment).join('')
  return path.startsWith('.') ? path.slice(1) : `the policy${path}`
}

/** The index just past the JSON string starting at `start` (a `"`). */
function stringEnd(text: string, start: number): number {
  let i = start + 1
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
  return i + 1
}
