// @tollgate/prove — public surface: the proof and its runner. Imports nothing from @tollgate/*.
export {
  CannotProve,
  type CheckResult,
  DECLARED_CHECKS,
  EXIT,
  type Manifest,
  NO_SUCH_TOOL,
  proveFromManifest,
  readManifest,
  report,
  runChecks,
} from './prove.js'
export { REQUIREMENTS, type RequirementId } from './requirements.js'
export { REPO_ROOT, runProofs, serverCommand } from './run-proofs.js'
