// RFC 8785, the JSON Canonicalization Scheme (JCS): what a report's seal covers. Hand-written because it is the
// RFC's own definition in ECMAScript terms (§3.2: JSON.stringify for literals, strings and numbers; object keys
// sorted by UTF-16 code units; no whitespace), about twenty lines, and the seal must not change under a dependency
// update. Pinned against the RFC's examples in test/rfc8785-canonical-json.test.ts.
// One difference: RFC 8785 requires well-formed Unicode, while a lone surrogate here is written as JSON.stringify
// writes it (\udxxx), so a report quoting a provider's malformed text can still be sealed and verified.

/**
 * The RFC 8785 canonical form of `value`. Throws TypeError on values JSON cannot carry (undefined inside arrays,
 * non-finite numbers, functions); undefined object members are left out, as JSON.stringify does.
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
