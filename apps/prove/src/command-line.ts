// The command lines of `prove MANIFEST` (src/cli.ts) and the runner (src/run-proofs.ts), alike and like every Tollgate
// CLI: -h/--help and --version print and exit 0; an unknown flag or a bad value is one line naming the flag (never a
// value or a stray argument), then `see prove --help`, exit 2. Each flag is declared once, in a table that drives
// the parser and --help. It has the shape of @tollgate/cli's FlagTable, written out here rather than imported: prove
// depends on nothing of the code it proves (test/source-rules).
import { parseArgs } from 'node:util'

/** This package's version, pinned to the root's by the repository's version test (the installed bundle has no
 * package.json beside its code). */
export const VERSION = '0.1.0'

/** One flag, declared once (a subset of @tollgate/cli's FlagSpec). */
interface FlagSpec {
  readonly type: 'string' | 'boolean'
  readonly short?: string
  readonly value?: string
  readonly help: string
}
type FlagTable = Readonly<Record<string, FlagSpec>>

const COMMON = {
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
  version: { type: 'boolean', help: 'print the version and exit' },
} as const satisfies FlagTable

export const PROVE_FLAGS = COMMON
export const RUNNER_FLAGS = {
  port: {
    type: 'string',
    value: 'N',
    help: 'the port quenchz listens on (1–65535; default: a free one; env QUENCHZ_PORT)',
  },
  ...COMMON,
} as const satisfies FlagTable

/** `--help` text: `head`, a blank line, `options:` and one line a flag, then `tail` (as @tollgate/cli's flagHelp). */
function flagHelp(head: string, table: FlagTable, tail: string): string {
  const rows = Object.entries(table).map(([name, spec]) => {
    const label = `${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.value ? ` ${spec.value}` : ''}`
    return `  ${label.padEnd(16)} ${spec.help}`
  })
  return `${head}\n\noptions:\n${rows.join('\n')}\n\n${tail}`
}

export const PROVE_HELP = flagHelp(
  'usage: prove MANIFEST.json       prove a quenchz that is already running, from its token manifest',
  PROVE_FLAGS,
  'Exit codes: 0 every declared check passed, 1 a check failed, 2 the proof could not run.',
)

export const RUNNER_HELP = flagHelp(
  `usage: npm run prove -w apps/prove [-- --port N]
       starts quenchz (frozen budget clock, the shared history file), proves it, stops it`,
  RUNNER_FLAGS,
  `Environment: QUENCHZ_FROM=dist runs the built bin; QUENCHZ_ARGS adds quenchz arguments.
Exit codes: 0 passed, 1 a check failed, 2 the proof could not run, 129/130/143 stopped by a signal.`,
)

export type CommandLine<T> = { exit: number } | { values: T }

/** A flag name as typed, cut short so a pasted value can never ride along in full. */
function flagName(raw: string): string {
  const name = raw.split('=')[0] as string
  return name.length > 40 ? `${name.slice(0, 40)}…` : name
}

/** The problem in an error thrown by `util.parseArgs` (strict), naming the flag and never a value. */
function parseProblem(error: unknown): string {
  const e = error as Error & { code?: string }
  const quoted = /'(-{1,2}[^'\s<]+)/.exec(e.message)?.[1]
  const flag = quoted === undefined ? 'a flag' : flagName(quoted)
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown flag ${flag}`
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return /does not take an argument/.test(e.message) ? `${flag} takes no value` : `${flag} needs a value`
  return 'cannot read the arguments'
}

/**
 * Parses argv against `table`. Returns `{ exit }` when the command is done (help, version, usage error; already
 * printed), else the values and at most `positionals` positional arguments (`takes` says which, for a stray one).
 */
export function readCommandLine(
  argv: readonly string[],
  spec: { help: string; table: FlagTable; positionals: number; takes?: string },
  io: { out: (line: string) => void; err: (line: string) => void },
): CommandLine<{ options: Record<string, string | undefined>; positionals: string[] }> {
  const usage = (problem: string) => {
    io.err(`prove: ${problem}`)
    io.err('see prove --help')
    return { exit: 2 }
  }
  const options = Object.fromEntries(
    Object.entries(spec.table).map(([name, flag]) => [
      name,
      { type: flag.type, ...(flag.short === undefined ? {} : { short: flag.short }) },
    ]),
  )
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] }
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true }) as typeof parsed
  } catch (error) {
    return usage(parseProblem(error))
  }
  if (parsed.values.help === true) {
    io.out(spec.help)
    return { exit: 0 }
  }
  if (parsed.values.version === true) {
    io.out(`prove ${VERSION}`)
    return { exit: 0 }
  }
  // Never echoed: a stray argument may be anything a person pasted.
  if (parsed.positionals.length > spec.positionals)
    return usage(`unexpected argument: ${spec.takes ?? 'this command takes flags only'}`)
  const { help: _h, version: _v, ...values } = parsed.values
  return { values: { options: values as Record<string, string | undefined>, positionals: parsed.positionals } }
}
