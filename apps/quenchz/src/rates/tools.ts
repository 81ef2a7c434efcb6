// The four tools over a source: rates.window, calendar.why, series.catalogue, rates.convert.
// Caller faults come back as { ok: false, text } with the exact refusal bytes; machine faults are thrown.

import type { GatedToolAnswer } from '@tollgate/gate'
import { closingReason, SERIES_BEGINS_DAY } from './calendar.js'
import { buildCertificate, type Certificate, SOURCE_ATTRIBUTION, windowRefusal } from './certificate.js'
import type { Observation } from './classify.js'
import { refusalText } from './classify.js'
import { convertMinor, ROUNDING_RULE } from './convert.js'
import { minorUnitExponent } from './currencies.js'
import { formatDay, parseIsoDay, withThousands } from './days.js'
import { overdueAtMs } from './publication.js'
import { pyRepr } from './py-repr.js'
import { renderJson } from './render.js'
import {
  CATALOGUE_INPUT,
  CATALOGUE_OUTPUT,
  CONVERT_INPUT,
  CONVERT_OUTPUT,
  WHY_INPUT,
  WHY_OUTPUT,
  WINDOW_INPUT,
  WINDOW_OUTPUT,
} from './schemas.js'
import type { RatesSource } from './sources/source.js'

/** A tool's answer is the gate's: `ok: false` is an isError result with exactly one text item whose bytes are `text`. */
export type { GatedToolAnswer }

/** One tool as the server registers it. `call` validates its own arguments and never throws for caller faults. */
export interface RatesTool {
  name: string
  scope: 'rates:read' | 'series:list'
  title?: string
  description: string
  inputSchema: Record<string, unknown>
  outputSchema: Record<string, unknown>
  call(args: unknown): Promise<GatedToolAnswer>
}

/** The MCP server instructions string. */
export const SERVER_INSTRUCTIONS =
  'Euro foreign exchange reference rates from the ECB Data Portal. Every answer carries a coverage certificate saying what it did not deliver and why. Source: ECB statistics.'

const CURRENCY = /^[A-Z]{3}$/

function refuse(text: string): GatedToolAnswer {
  return { ok: false, text }
}

function answer(structuredContent: Record<string, unknown>): GatedToolAnswer & { ok: true } {
  return { ok: true, structuredContent, text: renderJson(structuredContent) }
}

function argsObject(args: unknown): Record<string, unknown> | null {
  if (args === undefined || args === null) return {}
  if (typeof args !== 'object' || Array.isArray(args)) return null
  return args as Record<string, unknown>
}

function unexpected(tool: string, allowed: readonly string[], args: Record<string, unknown>): string | null {
  const extra = Object.keys(args).find((k) => !allowed.includes(k))
  if (extra === undefined) return null
  return `${tool} takes ${allowed.join(', ') || 'no arguments'}; got an argument named ${pyRepr(extra)}`
}

function currencyRefusal(name: string, value: unknown): string {
  return `${name} must be a currency as three capital letters (ISO 4217); got ${pyRepr(value)}`
}

/** Series start and end for the certificate, from the source's whole series (never from the returned slice). */
async function seriesBounds(source: RatesSource, currency: string | undefined) {
  const extent = currency === undefined ? null : await source.extent(currency)
  return {
    // The last day a dated source (the history file) speaks for, ended series included: a window inside it and
    // wholly due never changes, so its answer can be built once.
    datedUntil: extent?.coveredUntil ?? null,
    seriesStart: extent ? Math.max(SERIES_BEGINS_DAY, extent.first) : SERIES_BEGINS_DAY,
    seriesEnd: extent?.ended ? extent.last : null,
    // Only a running series needs the source's own end: an ended one is accounted for by after_the_series.
    coveredUntil: extent && !extent.ended ? extent.coveredUntil : null,
  }
}

/** The refusal for a window that runs past the last day a dated source (the history file) can speak for. */
export function beyondSourceRefusal(coveredUntil: number, to: number): string {
  return `this source's data ends on ${formatDay(coveredUntil)} and cannot account for later days; the window runs to ${formatDay(to)}`
}

type WindowResult =
  | { ok: true; observations: Observation[]; certificate: Certificate; settled: boolean }
  | { ok: false; text: string }

async function fetchWindow(
  source: RatesSource,
  request: { currency?: string; from: number; to: number; recording?: string },
  now: Date,
): Promise<WindowResult> {
  const early = windowRefusal(request.from, request.to)
  if (early !== null) return { ok: false, text: early }
  const { coveredUntil, datedUntil, ...bounds } = await seriesBounds(source, request.currency)
  if (coveredUntil !== null && request.to > coveredUntil) {
    return { ok: false, text: beyondSourceRefusal(coveredUntil, request.to) }
  }
  const outcome = await source.window(
    {
      currency: request.currency ?? '',
      from: request.from,
      to: request.to,
      ...(request.recording === undefined ? {} : { recording: request.recording }),
    },
    now,
  )
  if (outcome.kind === 'source_refusal') return { ok: false, text: outcome.text }
  const refusal = refusalText(outcome)
  if (refusal !== null) return { ok: false, text: refusal }
  const all = outcome.kind === 'observations' ? outcome.observations : []
  const observations = all.filter((o) => o.day >= request.from && o.day <= request.to)
  // A cached body is certified as of its fetch (the cache is used only when no day fell due since), so the
  // certificate says when the body was completed, not when it was served.
  const built = buildCertificate({
    from: request.from,
    to: request.to,
    delivered: observations.map((o) => o.day),
    now: outcome.fetchedAtMs === undefined ? now : new Date(outcome.fetchedAtMs),
    ...bounds,
  })
  if (!built.ok) return { ok: false, text: built.message }
  // Settled: inside a dated file and every day of it past its deadline, so no later clock can change the answer.
  const settled = datedUntil !== null && request.to <= datedUntil && now.getTime() >= overdueAtMs(request.to)
  return { ok: true, observations, certificate: built.certificate, settled }
}

/** Most settled answers kept; the least recently used goes first. */
export const ANSWER_CACHE_ENTRIES = 64

/**
 * Built answers of settled windows (inside a dated history file, every day due), by currency and window. A hit is
 * the very same outcome object, text and all, so it is neither rebuilt nor serialised again; its certificate says
 * when it was built (`body_completed_at`), as a cached live answer says when it was fetched.
 */
class AnswerCache {
  readonly #entries = new Map<string, { outcome: GatedToolAnswer; builtAtMs: number }>()
  get(key: string, nowMs: number): GatedToolAnswer | undefined {
    const hit = this.#entries.get(key)
    // A clock that reads earlier than the build (a test's, or a stepped-back wall clock) is answered afresh.
    if (hit === undefined || nowMs < hit.builtAtMs) return undefined
    this.#entries.delete(key)
    this.#entries.set(key, hit)
    return hit.outcome
  }
  set(key: string, outcome: GatedToolAnswer, builtAtMs: number): void {
    this.#entries.set(key, { outcome, builtAtMs })
    if (this.#entries.size > ANSWER_CACHE_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string)
  }
}

function windowTool(source: RatesSource, now: () => Date): RatesTool {
  const allowed = ['currency', 'start', 'end', 'cassette'] as const
  const answers = new AnswerCache()
  return {
    name: 'rates.window',
    scope: 'rates:read',
    title: 'Reference rates across a window',
    description: 'Euro reference rates across a date window.',
    inputSchema: WINDOW_INPUT,
    outputSchema: WINDOW_OUTPUT,
    async call(raw) {
      const args = argsObject(raw)
      if (args === null) return refuse('rates.window takes an object of arguments')
      const from = parseIsoDay(args.start)
      const to = parseIsoDay(args.end)
      if (from === null || to === null) {
        return refuse(`start and end must be dates as YYYY-MM-DD; got ${pyRepr(args.start)} and ${pyRepr(args.end)}`)
      }
      const extra = unexpected('rates.window', allowed, args)
      if (extra !== null) return refuse(extra)
      const cassette = args.cassette
      if (cassette !== undefined && typeof cassette !== 'string') {
        return refuse(`cassette must be the name of a recording; got ${pyRepr(cassette)}`)
      }
      const currency = args.currency
      if (currency === undefined ? cassette === undefined : typeof currency !== 'string' || !CURRENCY.test(currency)) {
        return refuse(currencyRefusal('currency', currency))
      }
      const at = now()
      const key = cassette === undefined ? `${currency as string}|${from}|${to}` : undefined
      const cached = key === undefined ? undefined : answers.get(key, at.getTime())
      if (cached !== undefined) return cached
      const result = await fetchWindow(
        source,
        {
          from,
          to,
          ...(currency === undefined ? {} : { currency: currency as string }),
          ...(cassette === undefined ? {} : { recording: cassette }),
        },
        at,
      )
      if (!result.ok) return refuse(result.text)
      const structuredContent = {
        observations: result.observations.map((o) => [o.date, o.value]),
        coverage: result.certificate,
        source: SOURCE_ATTRIBUTION,
      }
      if (key === undefined || !result.settled) return answer(structuredContent)
      // Marked settled, the gate keeps this answer's serialised bytes too and does not serialise it again.
      const settled: GatedToolAnswer = { ...answer(structuredContent), settled: true }
      answers.set(key, settled, at.getTime())
      return settled
    },
  }
}

function whyTool(): RatesTool {
  return {
    name: 'calendar.why',
    scope: 'rates:read',
    title: 'Why a day has no rate',
    description: 'Why no rate was published on a given date.',
    inputSchema: WHY_INPUT,
    outputSchema: WHY_OUTPUT,
    async call(raw) {
      const args = argsObject(raw)
      const day = args?.day
      const parsed = parseIsoDay(day)
      if (args === null || parsed === null) return refuse(`day must be a date as YYYY-MM-DD; got ${pyRepr(day)}`)
      const extra = unexpected('calendar.why', ['day'], args)
      if (extra !== null) return refuse(extra)
      // Before the series every day is closed for that reason, weekdays included: otherwise 1999-01-01 reads as open.
      const reason = parsed < SERIES_BEGINS_DAY ? 'before_the_series' : closingReason(parsed)
      return answer({ date: day, closed_because: reason, source: SOURCE_ATTRIBUTION })
    },
  }
}

function catalogueTool(source: RatesSource): RatesTool {
  return {
    name: 'series.catalogue',
    scope: 'series:list',
    title: 'Every series reachable',
    description: 'Every series this server can reach. Most callers are not granted this.',
    inputSchema: CATALOGUE_INPUT,
    outputSchema: CATALOGUE_OUTPUT,
    async call(raw) {
      const args = argsObject(raw)
      if (args === null) return refuse('series.catalogue takes no arguments')
      const extra = unexpected('series.catalogue', [], args)
      if (extra !== null) return refuse(extra)
      const series = await source.catalogue()
      const count = series.length === 1 ? 'One series' : series.length === 0 ? 'No series' : `${series.length} series`
      return answer({
        series,
        note: `${count}. The catalogue exists to be a tool most callers cannot see.`,
        source: SOURCE_ATTRIBUTION,
      })
    },
  }
}

const ABSENCE_WORDING: Record<string, string> = {
  target_closed: 'TARGET was closed',
  not_yet_published: 'it is not yet published',
  no_such_observation: 'the vendor has no rate for a day one was owed',
  before_the_series: 'the series had not started',
  after_the_series: 'the series had ended',
}

function convertTool(source: RatesSource, now: () => Date): RatesTool {
  return {
    name: 'rates.convert',
    scope: 'rates:read',
    title: 'Convert through the euro',
    description:
      'Converts integer minor units between two currencies through the euro on one day, with that day’s certificates. Rounded once, half to even.',
    inputSchema: CONVERT_INPUT,
    outputSchema: CONVERT_OUTPUT,
    async call(raw) {
      const args = argsObject(raw)
      if (args === null) return refuse('rates.convert takes an object of arguments')
      const extra = unexpected('rates.convert', ['amount_minor', 'from', 'to', 'date'], args)
      if (extra !== null) return refuse(extra)
      const amount = args.amount_minor
      if (typeof amount !== 'number' || !Number.isSafeInteger(amount)) {
        return refuse(`amount_minor must be a whole number of minor units; got ${pyRepr(amount)}`)
      }
      const legs: { currency: string; exponent: number }[] = []
      for (const name of ['from', 'to'] as const) {
        const value = args[name]
        if (typeof value !== 'string' || !CURRENCY.test(value)) return refuse(currencyRefusal(name, value))
        const exponent = minorUnitExponent(value)
        if (exponent === null) return refuse(`${value} has no ISO 4217 minor unit in this server's table`)
        legs.push({ currency: value, exponent })
      }
      const day = parseIsoDay(args.date)
      if (day === null) return refuse(`date must be a date as YYYY-MM-DD; got ${pyRepr(args.date)}`)
      const at = now()
      const rates: string[] = []
      const certificates: (Certificate | null)[] = []
      for (const leg of legs) {
        if (leg.currency === 'EUR') {
          rates.push('1')
          certificates.push(null)
          continue
        }
        const result = await fetchWindow(source, { currency: leg.currency, from: day, to: day }, at)
        if (!result.ok) return refuse(result.text)
        const observation = result.observations[0]
        if (!observation) {
          const absent = Object.entries(result.certificate.absent).find(([, n]) => n > 0)?.[0] ?? 'no_such_observation'
          const why = absent === 'target_closed' ? ` (${closingReason(day)})` : ''
          return refuse(`no ${leg.currency} rate for ${formatDay(day)}: ${ABSENCE_WORDING[absent]}${why}`)
        }
        rates.push(observation.lexeme)
        certificates.push(result.certificate)
      }
      const [from, to] = legs as [{ currency: string; exponent: number }, { currency: string; exponent: number }]
      const converted = convertMinor(
        BigInt(amount),
        { rate: rates[0] as string, exponent: from.exponent },
        { rate: rates[1] as string, exponent: to.exponent },
      )
      if (converted > BigInt(Number.MAX_SAFE_INTEGER) || converted < -BigInt(Number.MAX_SAFE_INTEGER)) {
        return refuse(`the converted amount exceeds ${withThousands(Number.MAX_SAFE_INTEGER)} minor units`)
      }
      return answer({
        amount_minor: Number(converted),
        currency: to.currency,
        date: formatDay(day),
        from: {
          currency: from.currency,
          minor_unit_exponent: from.exponent,
          rate_per_euro: rates[0],
          amount_minor: amount,
        },
        to: { currency: to.currency, minor_unit_exponent: to.exponent, rate_per_euro: rates[1] },
        rounding: ROUNDING_RULE,
        coverage: { from: certificates[0], to: certificates[1] },
        source: SOURCE_ATTRIBUTION,
      })
    },
  }
}

/** The four tools over one source. `now` defaults to the wall clock and is read once per call. */
export function createRatesTools(options: { source: RatesSource; now?: () => Date }): RatesTool[] {
  const now = options.now ?? (() => new Date())
  return [windowTool(options.source, now), whyTool(), catalogueTool(options.source), convertTool(options.source, now)]
}
