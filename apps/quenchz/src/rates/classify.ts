// Classification of an upstream HTTP response (digest §7.3), checked in order, never by status alone for a 200.
import { parseCsv } from './csv.js'
import { parseIsoDay } from './days.js'
import { Unreachable } from './errors.js'

/** One delivered rate: the day number, its ISO date, the decimal text as the vendor wrote it, and that text as a number. */
export interface Observation {
  day: number
  date: string
  lexeme: string
  value: number
}

/** Every way an upstream answer can turn out. Only `observations` and `empty_window` are answers. */
export type UpstreamOutcome =
  | { kind: 'observations'; observations: Observation[]; placeholders: number[]; detail: string }
  | { kind: 'empty_window'; detail: string }
  | { kind: 'wrong_format'; detail: string }
  | { kind: 'unknown_series'; detail: string }
  | { kind: 'rejected_parameters'; detail: string }
  | { kind: 'vendor_unavailable'; detail: string }
  | { kind: 'not_modified'; detail: string }

export type OutcomeKind = UpstreamOutcome['kind']

/** What the classifier reads of a response: status and raw body bytes. */
export interface UpstreamResponse {
  status: number
  body: Uint8Array
}

const DECIMAL = /^-?\d+(\.\d+)?$/
const NOT_CSV = 'a 200 whose body is not the expected CSV'

function problemDetail(body: Uint8Array): string | null {
  try {
    // The vendor's problem+json body is parsed only to lift one string out of it; nothing else is trusted.
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'))
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const detail = (parsed as Record<string, unknown>).detail
      if (typeof detail === 'string') return detail
    }
  } catch {
    // Not JSON: the fixed detail below says so.
  }
  return null
}

/** Parses an SDMX csvdata body (already known to be a 200 that is neither empty nor XML). */
export function parseSdmxCsv(text: string): UpstreamOutcome {
  const rows = parseCsv(text)
  const header = rows[0]
  if (!header || rows.length < 2) return { kind: 'wrong_format', detail: NOT_CSV }
  const timeAt = header.indexOf('TIME_PERIOD')
  const valueAt = header.indexOf('OBS_VALUE')
  if (timeAt < 0 || valueAt < 0) return { kind: 'wrong_format', detail: NOT_CSV }
  const observations: Observation[] = []
  const placeholders: number[] = []
  const seen = new Set<number>()
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r] as string[]
    const date = row[timeAt]
    const lexeme = row[valueAt]
    const day = parseIsoDay(date)
    if (day === null || lexeme === undefined || (lexeme !== '' && !DECIMAL.test(lexeme))) {
      return { kind: 'wrong_format', detail: NOT_CSV }
    }
    if (seen.has(day)) continue
    seen.add(day)
    if (lexeme === '') placeholders.push(day)
    else observations.push({ day, date: date as string, lexeme, value: Number(lexeme) })
  }
  observations.sort((a, b) => a.day - b.day)
  placeholders.sort((a, b) => a - b)
  const k = placeholders.length
  const detail = `${observations.length} observations${k > 0 ? `, and ${k} rows carrying no value at all` : ''}`
  return { kind: 'observations', observations, placeholders, detail }
}

/** Classifies one response, in the digest's order. */
export function classify(response: UpstreamResponse): UpstreamOutcome {
  const { status, body } = response
  if (status === 404) return { kind: 'unknown_series', detail: problemDetail(body) ?? 'no such series' }
  if (status === 400) return { kind: 'rejected_parameters', detail: 'the vendor rejected the parameters' }
  if (status >= 500) {
    return {
      kind: 'vendor_unavailable',
      detail: `the vendor answered ${status}, which is its problem and not the request's`,
    }
  }
  if (status === 304) {
    return { kind: 'not_modified', detail: 'the vendor reported no change to a request that was never conditional' }
  }
  if (status !== 200) return { kind: 'rejected_parameters', detail: `unexpected status ${status}` }
  const text = Buffer.from(body).toString('utf8')
  const trimmed = text.trimStart()
  if (trimmed.length === 0) return { kind: 'empty_window', detail: 'no observation falls inside the window' }
  if (trimmed.startsWith('<?xml')) {
    return { kind: 'wrong_format', detail: `asked for csvdata and received XML at status 200, ${body.length} bytes` }
  }
  return parseSdmxCsv(text)
}

/** The caller-facing refusal for a non-answer; answers have no refusal. Exhaustive by construction. */
export function refusalText(outcome: UpstreamOutcome): string | null {
  switch (outcome.kind) {
    case 'observations':
    case 'empty_window':
      return null
    case 'wrong_format':
      return `the vendor did not answer in the format asked for: ${outcome.detail}`
    case 'unknown_series':
      return `the vendor has no such series: ${outcome.detail}`
    case 'rejected_parameters':
      return `the vendor rejected the request: ${outcome.detail}`
    case 'vendor_unavailable':
      return `the vendor could not answer: ${outcome.detail}`
    case 'not_modified':
      return `the vendor did not answer what was asked: ${outcome.detail}`
    default: {
      const never: never = outcome
      throw new Unreachable((never as { kind?: unknown }).kind)
    }
  }
}
