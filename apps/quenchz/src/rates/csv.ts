// A small RFC 4180 reader: quoted fields (TITLE_COMPL holds commas), CRLF or LF line ends, a final line end optional.

/** Rows of fields; an empty trailing line is not a row. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  let i = 0
  const n = text.length
  while (i < n) {
    const ch = text.charCodeAt(i)
    if (quoted) {
      if (ch === 34) {
        if (text.charCodeAt(i + 1) === 34) {
          field += '"'
          i += 2
          continue
        }
        quoted = false
        i++
        continue
      }
      field += text[i]
      i++
      continue
    }
    if (ch === 34 && field.length === 0) {
      quoted = true
      i++
    } else if (ch === 44) {
      row.push(field)
      field = ''
      i++
    } else if (ch === 13 || ch === 10) {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      i += ch === 13 && text.charCodeAt(i + 1) === 10 ? 2 : 1
    } else {
      field += text[i]
      i++
    }
  }
  if (field.length > 0 || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows
}
