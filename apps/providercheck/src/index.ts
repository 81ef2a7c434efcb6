// @tollgate/providercheck — the conformance kit as a library (the bin is src/cli.ts).
// Everything exported here is public API.

export { amountsIn, currencyExponent, formatAmount } from './amounts.js'
export { type CallOutput, runCall } from './call-command.js'
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
export {
  type CheckResult,
  credentialsOf,
  type Fixtures,
  type KitCredentials,
  type KitOptions,
  type KitRun,
  kitOptionsProblem,
  needsOf,
  type ProvidercheckOptions,
  runKit,
  runProvidercheck,
  type VerdictName,
} from './kit.js'
export { EXIT, EXIT_INTERRUPTED, formatLine, main, type Output, type RunControl } from './main.js'
export { outputPathProblem } from './output-files.js'
export {
  FORBIDDEN_KEYWORDS,
  judgeProfile,
  limitProblems,
  measureSchema,
  PLATFORM_ARGUMENTS,
  SCHEMA_LIMITS,
} from './profile/index.js'
export {
  asReport,
  buildReport,
  escapeHtml,
  parseReportCommand,
  REPORT_FORMAT,
  type Report,
  type ReportCheck,
  type ReportPageCommand,
  type ReportVerification,
  renderReportHtml,
  type SealStatus,
  sealOf,
  verifyReport,
  writeReportPage,
} from './reports.js'
export { CHECK_IDS, type CheckId, REQUIREMENTS, type Requirement } from './requirements.js'
export { canonicalJson } from './rfc8785-canonical-json.js'
export { KIT_NAME, KIT_VERSION } from './version.js'
