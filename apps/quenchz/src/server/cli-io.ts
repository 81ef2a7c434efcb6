// Where the CLI writes and what it exits with: shared by the command (cli.ts) and its sub-commands' steps.
import { USAGE_EXIT, usageError } from '@tollgate/cli'

/** Exit codes by outcome. */
export const EXIT = { usage: USAGE_EXIT, refused: 1, failed: 1 } as const

export interface CliIo {
  stderr: (line: string) => void
  /** Help and version; default process.stdout. */
  stdout?: (line: string) => void
  /** false: do everything up to (not including) listening — the README command test stubs serving this way. */
  serve?: boolean
  cwd?: string
  env?: NodeJS.ProcessEnv
}

/** The usage-error convention of every Tollgate command (@tollgate/cli): one line naming the flag, then where help is. */
export function usage(io: CliIo, problem: string, bin = 'quenchz'): number {
  for (const line of usageError(bin, problem).trimEnd().split('\n')) io.stderr(line)
  return EXIT.usage
}
