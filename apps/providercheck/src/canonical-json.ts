/**
 * The canonical serialisation a report's seal covers: object keys sorted (UTF-16 order), no whitespace,
 * JSON.stringify for strings and finite numbers. Throws TypeError on values JSON cannot carry (undefined
 * inside arrays, non-finite numbers, functions).
 */
export function canonicalJson(value: unknown): string {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false'
    case 'string':
      return JSON.stringify(value)
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError('a non-finite number cannot be sealed')
      return JSON.stringify(value)
    case 'object': {
      if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v)).join(',')}]`
      const entries = Object.keys(value as object)
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      return `{${entries.join(',')}}`
    }
    default:
      throw new TypeError(`a ${typeof value} cannot be sealed`)
  }
}
