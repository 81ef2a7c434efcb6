// Where the kit's credentials come from: environment variables, never flags. A module of its own so the checks can
// name the variable in their messages without depending on the command line (which depends on the report, the run
// and so on the checks: an import cycle).

/** The secret's environment variable (the seed's). */
export const SECRET_ENV = 'PROVIDERCHECK_SANDBOX_SIGNING_SECRET'
/** The production secret's environment variable: read by `-live` only (srmp_…). */
export const LIVE_SECRET_ENV = 'PROVIDERCHECK_LIVE_SIGNING_SECRET'
/** The bearer token's environment variable: never a flag, so it stays out of shell history and process lists. */
export const BEARER_TOKEN_ENV = 'PROVIDERCHECK_BEARER_TOKEN'
