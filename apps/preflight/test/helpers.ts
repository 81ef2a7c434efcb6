// Builds check inputs from the seed's example document with small, named edits.
import { readFileSync } from 'node:fs'

export const BASE_TEXT = readFileSync(new URL('../examples/01-current_control.json', import.meta.url), 'utf8')

// The examples are our own files, so JSON.parse is fine here; inputs under test always go through check().
// biome-ignore lint/suspicious/noExplicitAny: test documents are edited freely, field by field
export type Doc = Record<string, any>
export function baseDoc(): Doc {
  return JSON.parse(BASE_TEXT) as Doc
}

/** The base document with `edit` applied, as bytes. */
export function docBytes(edit: (d: Doc) => void = () => {}): Uint8Array {
  const d = baseDoc()
  edit(d)
  return new TextEncoder().encode(JSON.stringify(d))
}

/**
 * The base document with a raw JSON lexeme placed at a spot marked by the string "@RAW@" (every occurrence) (for lexemes JS values
 * cannot express: 1500.0, 15e2, big integers).
 */
export function rawBytes(edit: (d: Doc) => void, raw: string): Uint8Array {
  const d = baseDoc()
  edit(d)
  return new TextEncoder().encode(JSON.stringify(d).replaceAll('"@RAW@"', raw))
}

export const receipt = (d: Doc): Doc => d.response.result.structuredContent
