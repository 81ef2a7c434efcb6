// Quoting of caller-sent values in refusal messages, in the style of Python repr (the original echoes them so).

/** The most characters of a caller's value a message quotes; the rest is counted, never echoed. */
export const ECHO_LIMIT = 40

/**
 * Python-repr style quoting of a caller's value, as the original's messages echo it. A value longer than
 * ECHO_LIMIT is quoted by its prefix and its length (`'abc…' (900000 characters)`): an error never grows with the
 * input, so a megabyte argument costs a short refusal, not a megabyte echoed back.
 */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (typeof value === 'number') return String(value)
  if (typeof value !== 'string') return pyRepr(JSON.stringify(value) ?? '')
  if (value.length > ECHO_LIMIT) {
    // Cut on a code point boundary: never half a surrogate pair.
    const cut = /[\uD800-\uDBFF]/.test(value.charAt(ECHO_LIMIT - 1)) ? ECHO_LIMIT - 1 : ECHO_LIMIT
    const quoted = pyRepr(value.slice(0, cut))
    return `${quoted.slice(0, -1)}…${quoted.slice(-1)} (${value.length} characters)`
  }
  const quote = value.includes("'") && !value.includes('"') ? '"' : "'"
  let out = ''
  for (const ch of value) {
    const code = ch.codePointAt(0) as number
    if (ch === '\\') out += '\\\\'
    else if (ch === quote) out += `\\${quote}`
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (ch === '\t') out += '\\t'
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`
    else out += ch
  }
  return quote + out + quote
}
