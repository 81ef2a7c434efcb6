// The kit as a library: what a check is and returns, and running the checks against an endpoint.
export type { CheckResult, Fixtures, KitCredentials, VerdictName } from './check-types.js'
export {
  credentialsOf,
  type KitOptions,
  type KitRun,
  kitOptionsProblem,
  needsOf,
  runKit,
} from './run-kit.js'
export { type ProvidercheckOptions, runProvidercheck } from './run-providercheck.js'
