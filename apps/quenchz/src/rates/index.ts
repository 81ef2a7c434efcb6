// The rates core of quenchz: sources, classification, calendar, certificate and the four tools.
// Everything exported here is public; the server wiring (apps/quenchz/src/server) codes against exactly this.

export {
  ANNUAL_RULES_FROM,
  type ClosingReason,
  closingReason,
  easterSunday,
  PLACEHOLDER_ROWS_END,
  SERIES_BEGINS,
} from './calendar.js'
export {
  type Absent,
  buildCertificate,
  type Certificate,
  type CertificateInput,
  type CertificateResult,
  isComplete,
  MAX_WINDOW_DAYS,
  SOURCE_ATTRIBUTION,
} from './certificate.js'
export {
  classify,
  type Observation,
  type OutcomeKind,
  refusalText,
  type UpstreamOutcome,
  type UpstreamResponse,
} from './classify.js'
export { convertMinor, divideHalfEven, ROUNDING_RULE } from './convert.js'
export { knownCurrencies, minorUnitExponent } from './currencies.js'
export { formatDay, parseIsoDay } from './days.js'
export {
  HistoryFormat,
  NoIndex,
  RatesError,
  type RatesErrorCode,
  RecordingAbsent,
  RecordingCorrupted,
  Unreachable,
  UpstreamFailed,
} from './errors.js'
export { openSource } from './open-source.js'
export { overdueAtMs } from './publication.js'
export { renderJson } from './render.js'
export { HistorySource } from './sources/history.js'
export { ECB_EXR_BASE, LiveSource } from './sources/live.js'
export { type RecordingEntry, RecordingsSource } from './sources/recordings.js'
export type {
  RatesSource,
  SeriesExtent,
  SourceConfig,
  SourceRefusal,
  UpstreamObserver,
  UpstreamResult,
  WindowRequest,
} from './sources/source.js'
export { seriesKey } from './sources/source.js'
export { createRatesTools, type GatedToolAnswer, type RatesTool, SERVER_INSTRUCTIONS } from './tools.js'
