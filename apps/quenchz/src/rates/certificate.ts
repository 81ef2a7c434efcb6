// The coverage certificate (digest §5): accounts for every date of the window, walked a day at a time.
import { closingReason } from './calendar.js'
import { formatDay, formatInstant, withThousands } from './days.js'
import { overdueAtMs } from './publication.js'

/** The attribution every payload carries. */
export const SOURCE_ATTRIBUTION = 'ECB statistics.'

/** 1999-01-04 to 2040-12-31 inclusive: the series from its first day to well past today. */
export const MAX_WINDOW_DAYS = 15_338

/** Why owed-or-not days were not delivered. `after_the_series` appears only for a series that has ended. */
export interface Absent {
  target_closed: number
  not_yet_published: number
  no_such_observation: number
  before_the_series: number
  after_the_series?: number
}

/** Serialised in this field order; every field is required except `absent.after_the_series`. */
export interface Certificate {
  requested_from: string
  requested_to: string
  requested_calendar_days: number
  expected_observations: number
  delivered_observations: number
  delivered_from: string | null
  delivered_to: string | null
  absent: Absent
  window_still_open: boolean
  body_completed_at: string
  source: string
}

export interface CertificateInput {
  /** Window bounds as day numbers, inclusive. */
  from: number
  to: number
  /** Delivered dates (day numbers); must already be clipped to the window. */
  delivered: Iterable<number>
  /** The wall clock the classification uses. */
  now: Date
  /** First day of the series, from the calendar or the source's full series; never from the returned slice. */
  seriesStart: number
  /** Last published day of a series that has ended (from the source's full series), or null while it runs. */
  seriesEnd?: number | null
}

export type CertificateResult = { ok: true; certificate: Certificate } | { ok: false; message: string }

/** Whether a certificate says nothing owed is missing (delivered = expected). A window before the series is complete. */
export function isComplete(certificate: Certificate): boolean {
  return certificate.delivered_observations === certificate.expected_observations
}

/** The refusal for a window whose end precedes its start (dates as the caller sent them). */
export function windowOrderRefusal(from: string, to: string): string {
  return `window ends before it starts: ${from} to ${to}`
}

/** The refusal for a window wider than MAX_WINDOW_DAYS. */
export function windowWidthRefusal(days: number): string {
  return `a window of ${withThousands(days)} days was asked for and ${withThousands(MAX_WINDOW_DAYS)} is the most this answers, which is the series from its first day to well past today. This is walked a day at a time, so the cost of answering is the width of the question`
}

/** Checks the window before anything is fetched or walked: order, then width. Null when acceptable. */
export function windowRefusal(from: number, to: number): string | null {
  if (to < from) return windowOrderRefusal(formatDay(from), formatDay(to))
  const days = to - from + 1
  if (days > MAX_WINDOW_DAYS) return windowWidthRefusal(days)
  return null
}

/**
 * Builds the certificate. Guards, in order: window order, stray delivered dates, width (before any day is walked).
 * Walk order per day: delivered, before the series, after an ended series, calendar closure, then owed
 * (overdue at 17:00 Frankfurt → no_such_observation, otherwise not_yet_published).
 */
export function buildCertificate(input: CertificateInput): CertificateResult {
  const { from, to, now, seriesStart } = input
  const seriesEnd = input.seriesEnd ?? null
  if (to < from) return { ok: false, message: windowOrderRefusal(formatDay(from), formatDay(to)) }
  const delivered = new Set<number>()
  const strays: number[] = []
  for (const day of input.delivered) {
    if (day < from || day > to) strays.push(day)
    else delivered.add(day)
  }
  if (strays.length > 0) {
    // A loop, not Math.min(...strays): a spread of a very long list overflows the stack.
    let first = strays[0] as number
    for (const d of strays) if (d < first) first = d
    return {
      ok: false,
      message: `${strays.length} delivered dates fall outside the window this certificate is about, the first being ${formatDay(first)}. Clip before asking, because a certificate counting observations it did not examine describes a different window from the one it names`,
    }
  }
  const span = to - from + 1
  if (span > MAX_WINDOW_DAYS) return { ok: false, message: windowWidthRefusal(span) }

  const nowMs = now.getTime()
  let expected = 0
  let targetClosed = 0
  let notYetPublished = 0
  let noSuch = 0
  let before = 0
  let after = 0
  for (let offset = 0; offset < span; offset++) {
    const d = from + offset
    if (delivered.has(d)) expected++
    else if (d < seriesStart) before++
    else if (seriesEnd !== null && d > seriesEnd) after++
    else if (closingReason(d) !== null) targetClosed++
    else {
      expected++
      if (nowMs >= overdueAtMs(d)) noSuch++
      else notYetPublished++
    }
  }
  let first: number | null = null
  let last: number | null = null
  for (const d of delivered) {
    if (first === null || d < first) first = d
    if (last === null || d > last) last = d
  }
  const absent: Absent = {
    target_closed: targetClosed,
    not_yet_published: notYetPublished,
    no_such_observation: noSuch,
    before_the_series: before,
  }
  if (seriesEnd !== null) absent.after_the_series = after
  return {
    ok: true,
    certificate: {
      requested_from: formatDay(from),
      requested_to: formatDay(to),
      requested_calendar_days: span,
      expected_observations: expected,
      delivered_observations: delivered.size,
      delivered_from: first === null ? null : formatDay(first),
      delivered_to: last === null ? null : formatDay(last),
      absent,
      window_still_open: notYetPublished > 0,
      body_completed_at: formatInstant(now),
      source: SOURCE_ATTRIBUTION,
    },
  }
}
