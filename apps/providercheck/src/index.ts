// @tollgate/providercheck — the conformance kit as a library (the bin is src/cli.ts).
// Everything exported here is public API.

export { type CallOutput, runCall } from './call-command.js'
export { CheckFailure, type CheckResult, type Fixtures, type KitCredentials, type VerdictName } from './check-types.js'
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
export { EXIT, formatLine, main, type Output } from './main.js'
export { amountsIn, currencyExponent, describeAmount } from './money.js'
export { judgeProfile } from './profile/judge-profile.js'
export { PLATFORM_ARGUMENTS } from './profile/platform-arguments.js'
export { FORBIDDEN_KEYWORDS, limitProblems, measureSchema, SCHEMA_LIMITS } from './profile/schema-limits.js'
export { buildReport, REPORT_FORMAT, type Report, type ReportVerification, sealOf, verifyReport } from './report.js'
export { CHECK_IDS, type CheckId, REQUIREMENTS, type Requirement } from './requirements.js'
export { canonicalJson } from './rfc8785-canonical-json.js'
export {
  credentialsOf,
  KitConfigError,
  type KitOptions,
  type KitRun,
  kitOptionsProblem,
  needsOf,
  runKit,
} from './run-kit.js'
export { KIT_NAME, KIT_VERSION } from './version.js'
