import { resultFor } from './diagnostics.js'
import type { PreflightResult } from './outcomes.js'
import { checkFile } from './read-input-file.js'

/**
 * Interprets the command line (without `node` and the script): exactly one argument, which is `--help` or a path.
 * A path starting with '-' must be written `./-name`, so any other dash argument is an unknown option.
 * `checker` is injectable so tests can prove that a thrown fault becomes internal_error without its text.
 */
export function runCli(
  args: readonly string[],
  checker: (path: string) => PreflightResult = checkFile,
): PreflightResult {
  try {
    if (args.length === 1 && args[0] === '--help') return resultFor('usage_check_one_file')
    if (args.length !== 1) return resultFor('argument_count_invalid')
    const path = args[0]!
    if (path === '') return resultFor('argument_empty_path')
    if (path.startsWith('-')) return resultFor('argument_unknown_option')
    return checker(path)
  } catch {
    return resultFor('internal_error')
  }
}
