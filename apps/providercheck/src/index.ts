// @tollgate/providercheck — the conformance kit as a library (the bin is src/cli.ts).
// Everything exported here is public API.

export { amountsIn, currencyExponent, formatAmount } from './amounts.js'
export { type CallOutput, runCall } from './call-command.js'
export type { CheckResult, Fixtures, KitCredentials, VerdictName } from './check-types.js'
export { CHECKS } from './checks/index.js'
export {
  BEARER_TOKEN_ENV,
  type CallCommand,
  type Command,
  parseCommandLine,
  type RunCommand,
  SECRET_ENV,
  USAGE,
} from './command-line.js'
export {
  CheckFailure,
  KitConfigError,
  NotApplicable,
  ProvidercheckError,
  type ProvidercheckErrorCode,
  ReportShapeError,
  UnsuitableFixture,
} from './errors.js'
export { EXCERPT_MAX_CHARS, EXCHANGES_MAX, type Exchange, ExchangeRecorder, shorten } from './exchange-recorder.js'
export { EXIT, EXIT_INTERRUPTED, formatLine, main, type Output, type RunControl } from './main.js'
export { outputPathProblem } from './output-files.js'
export { judgeProfile } from './profile/judge-profile.js'
export { PLATFORM_ARGUMENTS } from './profile/platform-arguments.js'
export { FORBIDDEN_KEYWORDS, limitProblems, measureSchema, SCHEMA_LIMITS } from './profile/schema-limits.js'
export {
  buildReport,
  REPORT_FORMAT,
  type Report,
  type ReportCheck,
  type ReportVerification,
  sealOf,
  verifyReport,
} from './report.js'
export { parseReportCommand, type ReportPageCommand, writeReportPage } from './report-command.js'
export { escapeHtml, renderReportHtml, type SealStatus } from './report-html.js'
export { asReport } from './report-shape.js'
export { CHECK_IDS, type CheckId, REQUIREMENTS, type Requirement } from './requirements.js'
export { canonicalJson } from './rfc8785-canonical-json.js'
export {
  credentialsOf,
  type KitOptions,
  type KitRun,
  kitOptionsProblem,
  needsOf,
  runKit,
} from './run-kit.js'
export { type ProvidercheckOptions, runProvidercheck } from './run-providercheck.js'
export { KIT_NAME, KIT_VERSION } from './version.js'
