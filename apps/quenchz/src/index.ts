// @tollgate/quenchz — public surface of the app: the server wiring and the interop manifest.
// The rates core (sources, calendar, certificate, tools) is exported from ./rates/index.js.

export { HELP, main as runCli, VERSION } from './cli.js'
export { BUDGET, CALLERS, DEFAULT_PORT, ELSEWHERE, ISSUER, RESOURCE, SERVER_INFO } from './server/constants.js'
export { isInside, repositoryRoot } from './server/repository-guard.js'
export {
  type QuenchzServerOptions,
  quenchzBudget,
  quenchzGate,
  type RunningQuenchz,
  startQuenchz,
} from './server/start-quenchz.js'
export { buildTokenManifest, type TokenManifest, writeTokenManifest } from './server/token-manifest.js'
