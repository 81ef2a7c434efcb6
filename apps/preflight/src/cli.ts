// The `preflight` command: one argument, one JSON line on stdout, the outcome's exit code. Never reads stdin.
import { writeSync } from 'node:fs'
import { exitQuietlyOnBrokenPipe, isBrokenPipe } from '@tollgate/cli'
import { resultFor } from './diagnostics.js'
import { formatResult, type PreflightResult } from './outcomes.js'
import { runCli } from './run-cli.js'

/**
 * Writes the line straight to fd 1. Creating `process.stdout` loads Node's stream and tty/net modules, a measurable
 * share of a process that checks one file (npm run bench -w apps/preflight). A descriptor that cannot take it
 * synchronously (EAGAIN on a non-blocking pipe) gets the rest through process.stdout. A reader that is gone (EPIPE)
 * gets nothing, quietly: the exit code stays the outcome's (the seed's codes; no stack trace).
 */
function writeLine(line: string, exitCode: number): void {
  const bytes = Buffer.from(line, 'utf8')
  let written = 0
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written)
  } catch (error) {
    if (isBrokenPipe(error)) return
    exitQuietlyOnBrokenPipe([process.stdout], exitCode)
    process.stdout.write(bytes.subarray(written))
  }
}

let result: PreflightResult
try {
  result = runCli(process.argv.slice(2))
} catch {
  result = resultFor('internal_error')
}
writeLine(formatResult(result), result.exit_code)
process.exitCode = result.exit_code
