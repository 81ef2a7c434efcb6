// The upstream port: what every source (recordings, history file, live ECB API) offers the tools.
import type { UpstreamOutcome } from '../classify.js'

/** How to open a source. `history.file` may be the ECB's eurofxref-hist .zip or the .csv inside it. */
export type SourceConfig =
  | { kind: 'recordings'; dir: string }
  | { kind: 'history'; file: string }
  | { kind: 'live'; baseUrl: string; cacheFile: string; timeoutMs?: number }

/** A request for one daily series over an inclusive window (day numbers). */
export interface WindowRequest {
  currency: string
  from: number
  to: number
  /** Recordings only: replay exactly this named recording instead of matching the request. */
  recording?: string
}

/**
 * The source's knowledge of a whole series, never of a returned slice.
 * `ended` is true when the series' currency was replaced or abolished (CYP, HRK, TRL, …; see ended-currencies.ts)
 * while the dataset went on: its `last` day is then the last published rate and later days are `after_the_series`.
 * A series that merely fell silent (RUB) has not ended.
 */
export interface SeriesExtent {
  first: number
  last: number
  ended: boolean
  /**
   * The last day this source can speak for (a file's newest row), or null for a source that follows the vendor.
   * A running series cannot be certified past it: a dated file's silence is not the vendor's.
   */
  coveredUntil: number | null
}

/** A source-level refusal that is not an upstream answer (e.g. no recording by that name). */
export interface SourceRefusal {
  kind: 'source_refusal'
  text: string
}

/**
 * An upstream outcome as a source delivers it. `fetchedAtMs` is when the vendor's body was fetched, for a source
 * that may answer from a cache: the certificate then says when the body was completed, not when it was served.
 */
export type SourceOutcome = UpstreamOutcome & { fetchedAtMs?: number }

/** The upstream port. Machine faults (corrupt recordings, unreadable files) are thrown as RatesError. */
export interface RatesSource {
  readonly kind: SourceConfig['kind']
  /** Fetches (or replays, or reads) one window; `now` lets the live cache refuse stale answers for due days. */
  window(request: WindowRequest, now: Date): Promise<SourceOutcome | SourceRefusal>
  /** Every series key this source reaches, sorted. */
  catalogue(): Promise<string[]>
  /** The whole series' first/last published day, or null when the source cannot know it. */
  extent(currency: string): Promise<SeriesExtent | null>
  /** Releases files and database handles. */
  close(): Promise<void>
}

/** How one request to the vendor ended: the HTTP status class, or why there was no status. */
export type UpstreamResult = '2xx' | '3xx' | '4xx' | '5xx' | 'timeout' | 'unreachable' | 'too-large'

/**
 * Told what a source that asks a vendor (the live source) does, for metrics: every request actually sent upstream
 * and every answer served from the cache instead. Called synchronously; must not throw. Never given a URL or a body.
 */
export interface UpstreamObserver {
  /** One request sent upstream: how it ended and how long it took, seconds. */
  fetched(result: UpstreamResult, seconds: number): void
  /** One window answered from the cache without asking the vendor. */
  cacheHit(): void
}

/** `EXR.D.<CUR>.EUR.SP00.A`, the daily reference rate series of one currency against the euro. */
export function seriesKey(currency: string): string {
  return `EXR.D.${currency}.EUR.SP00.A`
}
