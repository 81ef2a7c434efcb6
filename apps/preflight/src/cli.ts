// The `preflight` command: one argument, one JSON line on stdout, the outcome's exit code. Never reads stdin.
import { resultFor } from './diagnostics.js'
import { formatResult, type PreflightResult } from './outcomes.js'
import { runCli } from './run-cli.js'

let result: PreflightResult
try {
  result = runCli(process.argv.slice(2))
} catch {
  result = resultFor('internal_error')
}
process.stdout.write(formatResult(result))
process.exitCode = result.exit_code
