// Quoting of caller-sent values in refusal messages, in the style of Python repr (the original echoes them so).

/** Python-repr style quoting of a caller's value, as the original's messages echo it. */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None'
  if (value === true) return 'True'
  if (value === false) return 'False'
  if (typeof value === 'number') return String(value)
  if (typeof value !== 'string') return pyRepr(JSON.stringify(value) ?? '')
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
