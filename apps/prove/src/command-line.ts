// The command lines of `prove MANIFEST` (src/cli.ts) and the runner (src/run-proofs.ts), alike: -h/--help and
// --version print and exit 0; an unknown flag or a bad value is one line naming it, then `see prove --help`, exit 2.
import { parseArgs } from 'node:util'

/** This package's version, pinned to the root's by the repository's version test (the installed bundle has no
 * package.json beside its code). */
export const VERSION = '0.1.0'

export const PROVE_HELP = `usage: prove MANIFEST.json       prove a quenchz that is already running, from its token manifest

options:
  -h, --help     show this help and exit
      --version  print the version and exit

Exit codes: 0 every declared check passed, 1 a check failed, 2 the proof could not run.`

export const RUNNER_HELP = `usage: npm run prove -w apps/prove [-- --port N]
       starts quenchz (frozen budget clock, the shared history file), proves it, stops it

options:
      --port N   the port quenchz listens on (default: a free one; env QUENCHZ_PORT)
  -h, --help     show this help and exit
      --version  print the version and exit

Environment: QUENCHZ_FROM=dist runs the built bin; QUENCHZ_ARGS adds quenchz arguments.
Exit codes: 0 passed, 1 a check failed, 2 the proof could not run, 129/130/143 stopped by a signal.`

export type CommandLine<T> = { exit: number } | { values: T }

/** At most a short prefix of something a person typed. */
function shortened(text: string, max = 40): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`
}

/**
 * Parses argv. Returns `{ exit }` when the command is done (help, version, usage error; already printed), else the
 * values and positionals.
 */
export function readCommandLine(
  argv: readonly string[],
  spec: { help: string; options?: Record<string, { type: 'string' }>; positionals: number },
  io: { out: (line: string) => void; err: (line: string) => void },
): CommandLine<{ options: Record<string, string | undefined>; positionals: string[] }> {
  const usage = (problem: string) => {
    io.err(`prove: ${problem}`)
    io.err('see prove --help')
    return { exit: 2 }
  }
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] }
  try {
    parsed = parseArgs({
      args: [...argv],
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' }, ...spec.options },
      strict: true,
      allowPositionals: true,
    }) as typeof parsed
  } catch (error) {
    const e = error as Error & { code?: string }
    const quoted = /'([^']*)'/.exec(e.message)?.[1] ?? ''
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return usage(`unknown option ${shortened(quoted)}`)
    if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') return usage(`${quoted.split(' ')[0]} needs a value`)
    return usage(e.message.split('\n')[0] as string)
  }
  if (parsed.values.help === true) {
    io.out(spec.help)
    return { exit: 0 }
  }
  if (parsed.values.version === true) {
    io.out(`prove ${VERSION}`)
    return { exit: 0 }
  }
  if (parsed.positionals.length > spec.positionals)
    return usage(`unexpected argument ${shortened(parsed.positionals[spec.positionals] as string)}`)
  const { help: _h, version: _v, ...options } = parsed.values
  return { values: { options: options as Record<string, string | undefined>, positionals: parsed.positionals } }
}
