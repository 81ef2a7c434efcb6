// Locates the first byte that breaks UTF-8 well-formedness (RFC 3629: no overlongs, no surrogates, ≤ U+10FFFF).
// Only called after the fast native check has already failed, so clarity beats speed here.
export function firstInvalidUtf8Offset(b: Uint8Array): number {
  const n = b.length
  let i = 0
  while (i < n) {
    const c = b[i]!
    if (c < 0x80) {
      i++
      continue
    }
    let need: number
    let lo = 0x80
    let hi = 0xbf
    if (c >= 0xc2 && c <= 0xdf) need = 1
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2
      if (c === 0xe0) lo = 0xa0
      else if (c === 0xed) hi = 0x9f
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3
      if (c === 0xf0) lo = 0x90
      else if (c === 0xf4) hi = 0x8f
    } else return i
    const second = b[i + 1]
    if (second === undefined || second < lo || second > hi) return i
    for (let k = 2; k <= need; k++) {
      const x = b[i + k]
      if (x === undefined || x < 0x80 || x > 0xbf) return i
    }
    i += need + 1
  }
  return n
}
