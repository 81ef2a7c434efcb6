// Public API of @tollgate/preflight: everything exported here is public; the `preflight` bin is src/cli.ts.
export { check, MAX_INPUT_BYTES, MAX_INPUT_DEPTH } from './check.js'
export { DIAGNOSTICS, type Diagnostic, resultFor } from './diagnostics.js'
export { EXIT_CODES, formatResult, type Outcome, type PreflightResult, VERSION } from './outcomes.js'
export { checkFile, type InputFile, readInputFile } from './read-input-file.js'
export { runCli } from './run-cli.js'
