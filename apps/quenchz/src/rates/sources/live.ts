// The live ECB Data Portal SDMX CSV API, with answers cached in SQLite so a window is fetched once.
// A cached answer is trusted only if it was fetched after every day it should contain had become due: a cache
// filled before a day's 17:00 Frankfurt deadline never speaks for that day once the deadline has passed.
import Database from 'better-sqlite3'
import { closingReason } from '../calendar.js'
import { classify, type UpstreamOutcome, type UpstreamResponse } from '../classify.js'
import { parseCsv } from '../csv.js'
import { formatDay, parseIsoDay } from '../days.js'
import { isEndedCurrency } from '../ended-currencies.js'
import { UpstreamFailed } from '../errors.js'
import { overdueAtMs } from '../publication.js'
import { pyRepr } from '../py-repr.js'
import {
  type RatesSource,
  type SeriesExtent,
  type SourceOutcome,
  type SourceRefusal,
  seriesKey,
  type UpstreamObserver,
  type UpstreamResult,
  type WindowRequest,
} from './source.js'

/** The ECB's own EXR compilation on its Data Portal: the only upstream this source is meant for. */
export const ECB_EXR_BASE = 'https://data-api.ecb.europa.eu/service/data/EXR'
/** Default per-request timeout (connect, headers and body together). */
export const DEFAULT_TIMEOUT_MS = 10_000
/** How long the catalogue and series-extent answers are reused before asking again. */
export const EXTENT_TTL_MS = 12 * 3_600_000
/** After a failed catalogue/extent query, the certificate goes without the series' edges for this long. */
export const EXTENT_RETRY_MS = 5 * 60_000
/**
 * A replaced or abolished currency's series counts as ended only once its last rate is this many days older than
 * the newest rate of any series.
 */
export const ENDED_MARGIN_DAYS = 7

/** A cached answer missing its latest due day is asked again until this long after that day's deadline… */
export const LATE_RECHECK_MS = 24 * 3_600_000
/** …but no more often than this. */
export const LATE_RECHECK_INTERVAL_MS = 15 * 60_000

/** A body larger than this is not read to the end: the whole USD history is about 1.5 MB. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024

const MS_PER_DAY = 86_400_000

/** Reads a response body, giving up past `limit` bytes (null then). */
async function readCapped(response: Response, limit: number): Promise<Uint8Array | null> {
  if (!response.body) return new Uint8Array(0)
  const chunks: Uint8Array[] = []
  let total = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length
    if (total > limit) {
      await response.body.cancel().catch(() => undefined)
      return null
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}

/** The path and query of one daily series window (what is sent, and the cache key). */
export function windowPath(currency: string, from: number, to: number): string {
  return `/service/data/EXR/D.${currency}.EUR.SP00.A?format=csvdata&startPeriod=${formatDay(from)}&endPeriod=${formatDay(to)}`
}

/** The latest open day of [from, to] whose 17:00 Frankfurt deadline has passed at `nowMs`, or null. */
function latestDueDay(from: number, to: number, nowMs: number): number | null {
  const today = Math.floor(nowMs / MS_PER_DAY)
  for (let d = Math.min(to, today); d >= from; d--) {
    if (closingReason(d) !== null) continue
    if (overdueAtMs(d) > nowMs) continue
    return d
  }
  return null
}

/**
 * Whether an answer fetched at `fetchedAtMs` can stand for [from, to] at `nowMs`: it must postdate the deadline of the
 * latest open day of the window whose deadline has passed.
 */
export function cacheCovers(fetchedAtMs: number, from: number, to: number, nowMs: number): boolean {
  const due = latestDueDay(from, to, nowMs)
  return due === null || fetchedAtMs >= overdueAtMs(due)
}

/**
 * Whether a cached answer that lacks the window's latest due day should be asked again: the ECB says "around 16:00",
 * so a rate can arrive after the 17:00 deadline. Until LATE_RECHECK_MS past that deadline, and at most once per
 * LATE_RECHECK_INTERVAL_MS, the vendor is asked again rather than the cache's gap being repeated for ever.
 */
export function lateRecheckDue(
  outcome: UpstreamOutcome,
  fetchedAtMs: number,
  from: number,
  to: number,
  nowMs: number,
): boolean {
  const due = latestDueDay(from, to, nowMs)
  if (due === null) return false
  if (outcome.kind === 'observations') {
    if (outcome.observations.some((o) => o.day === due)) return false
  } else if (outcome.kind !== 'empty_window') return false
  return fetchedAtMs < overdueAtMs(due) + LATE_RECHECK_MS && nowMs - fetchedAtMs >= LATE_RECHECK_INTERVAL_MS
}

type Fetched = UpstreamResponse | { failed: string }

export class LiveSource implements RatesSource {
  readonly kind = 'live' as const
  readonly baseUrl: string
  readonly timeoutMs: number
  /** Requests actually sent upstream (cache hits excluded); for tests and logs. */
  requestsSent = 0
  private readonly db: Database.Database
  // A failed whole-dataflow query is not repeated on every call; it is asked again after this instant.
  private extentRetryAtMs = 0
  // Identical requests in flight share one upstream fetch, so a burst for one window still asks once.
  private readonly inFlight = new Map<string, Promise<Fetched>>()
  private readonly observer: UpstreamObserver | undefined

  private constructor(baseUrl: string, cacheFile: string, timeoutMs: number, observer: UpstreamObserver | undefined) {
    this.observer = observer
    // Either the origin or the EXR base (`…/service/data/EXR`) is accepted; requests append the EXR path themselves.
    this.baseUrl = baseUrl.replace(/\/+$/, '').replace(/\/service\/data\/EXR$/, '')
    this.timeoutMs = timeoutMs
    this.db = new Database(cacheFile)
    this.db.pragma('journal_mode = WAL')
    // Keyed by the whole upstream URL: a cache filled from one upstream must never answer for another. (An older
    // cache file's `responses` table, keyed by path alone, is left unread.)
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS answers (url TEXT PRIMARY KEY, status INTEGER NOT NULL, body BLOB NOT NULL, fetched_at_ms INTEGER NOT NULL)',
    )
  }

  /** `observer` is told of every upstream request and cache hit (metrics). */
  static async open(
    config: { baseUrl: string; cacheFile: string; timeoutMs?: number },
    observer?: UpstreamObserver,
  ): Promise<LiveSource> {
    const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw new RangeError('timeoutMs must be a positive integer')
    if (!/^https?:\/\/[^/]/.test(config.baseUrl)) throw new RangeError('baseUrl must be an http or https URL')
    return new LiveSource(config.baseUrl, config.cacheFile, timeoutMs, observer)
  }

  private cached(path: string): { status: number; body: Buffer; fetched_at_ms: number } | undefined {
    return this.db.prepare('SELECT status, body, fetched_at_ms FROM answers WHERE url = ?').get(this.baseUrl + path) as
      | { status: number; body: Buffer; fetched_at_ms: number }
      | undefined
  }

  /** One GET per path at a time; concurrent callers of the same path share it. */
  private get(path: string, nowMs: number): Promise<Fetched> {
    const pending = this.inFlight.get(path)
    if (pending) return pending
    const fetching = this.fetchOnce(path, nowMs).finally(() => this.inFlight.delete(path))
    this.inFlight.set(path, fetching)
    return fetching
  }

  /** One GET with a timeout covering headers and body; never conditional (no If-None-Match, no If-Modified-Since). */
  private async fetchOnce(path: string, nowMs: number): Promise<Fetched> {
    this.requestsSent++
    const startedMs = performance.now()
    // Told once per request, as soon as its outcome is known (a cache write failing afterwards is not the vendor's).
    let told = false
    const observed = (result: UpstreamResult) => {
      if (told) return
      told = true
      this.observer?.fetched(result, (performance.now() - startedMs) / 1000)
    }
    try {
      const response = await fetch(this.baseUrl + path, {
        headers: { accept: 'text/csv' },
        signal: AbortSignal.timeout(this.timeoutMs),
      })
      const body = await readCapped(response, MAX_BODY_BYTES)
      if (body === null) {
        observed('too-large')
        return { failed: `the vendor sent more than ${MAX_BODY_BYTES} bytes` }
      }
      observed(statusClass(response.status))
      // Only 200s are answers worth keeping; refusals are asked again next time.
      if (response.status === 200) {
        this.db
          .prepare('INSERT OR REPLACE INTO answers (url, status, body, fetched_at_ms) VALUES (?, ?, ?, ?)')
          .run(this.baseUrl + path, response.status, Buffer.from(body), nowMs)
      }
      return { status: response.status, body }
    } catch (error) {
      const name = (error as Error).name
      if (name === 'TimeoutError' || name === 'AbortError') {
        observed('timeout')
        return { failed: `the vendor did not answer within ${this.timeoutMs} ms` }
      }
      observed('unreachable')
      return { failed: 'the vendor could not be reached' }
    }
  }

  async window(request: WindowRequest, now: Date): Promise<SourceOutcome | SourceRefusal> {
    if (request.recording !== undefined) {
      return { kind: 'source_refusal', text: `no recording named ${pyRepr(request.recording)}` }
    }
    const path = windowPath(request.currency, request.from, request.to)
    const nowMs = now.getTime()
    const hit = this.cached(path)
    if (hit && cacheCovers(hit.fetched_at_ms, request.from, request.to, nowMs)) {
      const outcome = classify(hit)
      if (!lateRecheckDue(outcome, hit.fetched_at_ms, request.from, request.to, nowMs)) {
        this.observer?.cacheHit()
        return { ...outcome, fetchedAtMs: hit.fetched_at_ms }
      }
    }
    const fetched = await this.get(path, nowMs)
    if ('failed' in fetched) return { kind: 'vendor_unavailable', detail: fetched.failed }
    return classify(fetched)
  }

  /** Per-currency first or last observation day from one whole-dataflow query, reused for EXTENT_TTL_MS. */
  private async edges(query: string): Promise<Map<string, number>> {
    const path = `/service/data/EXR/D..EUR.SP00.A?format=csvdata&${query}`
    const nowMs = Date.now()
    const hit = this.cached(path)
    const response = hit && nowMs - hit.fetched_at_ms < EXTENT_TTL_MS ? hit : await this.get(path, nowMs)
    if ('failed' in response) throw new UpstreamFailed(response.failed)
    const outcome = classify(response)
    if (outcome.kind !== 'observations') {
      throw new UpstreamFailed(outcome.kind === 'empty_window' ? 'an empty dataflow' : outcome.detail)
    }
    return edgeDays(Buffer.from(response.body).toString('utf8'))
  }

  async catalogue(): Promise<string[]> {
    return [...(await this.edges('lastNObservations=1')).keys()].map(seriesKey).sort()
  }

  async extent(currency: string): Promise<SeriesExtent | null> {
    if (Date.now() < this.extentRetryAtMs) return null
    try {
      const lasts = await this.edges('lastNObservations=1')
      const firsts = await this.edges('firstNObservations=1')
      const first = firsts.get(currency)
      const last = lasts.get(currency)
      if (first === undefined || last === undefined) return null
      const newest = Math.max(...lasts.values())
      // Silence alone is not an end: only a replaced or abolished currency ends (RUB's suspension is gaps).
      const ended = isEndedCurrency(currency) && last < newest - ENDED_MARGIN_DAYS
      return { first, last, ended, coveredUntil: null }
    } catch {
      this.extentRetryAtMs = Date.now() + EXTENT_RETRY_MS
      // Without the whole series the certificate falls back to the calendar's start and no end: the safe direction.
      return null
    }
  }

  async close(): Promise<void> {
    this.db.close()
  }
}

function statusClass(status: number): UpstreamResult {
  return status < 300 ? '2xx' : status < 400 ? '3xx' : status < 500 ? '4xx' : '5xx'
}

/** Reads CURRENCY and TIME_PERIOD of a multi-series CSV; rows with an empty value are not observations. */
export function edgeDays(text: string): Map<string, number> {
  const rows = parseCsv(text)
  const header = rows[0] ?? []
  const currencyAt = header.indexOf('CURRENCY')
  const timeAt = header.indexOf('TIME_PERIOD')
  const valueAt = header.indexOf('OBS_VALUE')
  const days = new Map<string, number>()
  if (currencyAt < 0 || timeAt < 0 || valueAt < 0) return days
  for (const row of rows.slice(1)) {
    const currency = row[currencyAt]
    const day = parseIsoDay(row[timeAt])
    if (currency === undefined || day === null || !row[valueAt]) continue
    days.set(currency, day)
  }
  return days
}
