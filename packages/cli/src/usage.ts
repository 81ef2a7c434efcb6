// The usage-error convention of every Tollgate command: exit 2, one line naming the flag and the problem, then where
// the help is. Input values never appear (a flag's value may be a secret); flag names do.

/** The exit code of every usage error. */
export const USAGE_EXIT = 2

/** `<bin>: <problem>` and `see <bin> --help`, as two lines for stderr. */
export function usageError(bin: string, problem: string): string {
  return `${bin}: ${problem}\nsee ${bin} --help\n`
}

/** `<bin> <version>`, the whole output of `--version`. */
export function versionLine(bin: string, version: string): string {
  return `${bin} ${version}\n`
}

/** A flag name as typed, cut short so a pasted value can never ride along in full. */
function flagName(raw: string): string {
  const name = raw.split('=')[0] as string
  return name.length > 40 ? `${name.slice(0, 40)}…` : name
}

/**
 * The problem in an error thrown by `util.parseArgs` (strict mode), phrased for people. Positional arguments are
 * not echoed: they are values.
 */
export function parseArgsProblem(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : ''
  const quoted = /'(-{1,2}[^'\s<]+)/.exec(message)?.[1]
  const flag = quoted === undefined ? undefined : flagName(quoted)
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return flag === undefined ? 'unknown flag' : `unknown flag ${flag}`
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      // "Option '--port <value>' argument missing" or "Option '--help' does not take an argument".
      if (flag !== undefined && /does not take an argument/.test(message)) return `${flag} takes no value`
      return flag === undefined ? 'a flag is missing its value' : `${flag} needs a value`
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return 'unexpected argument: this command takes flags only'
    default:
      return 'cannot read the arguments'
  }
}
