// providercheck's flags have always taken one dash or two (-base-url or --base-url, -flag=value too), and its users'
// scripts, its README and its seed use the one-dash form. `util.parseArgs` reads only the long form, so the command
// line is rewritten to it first and one table then reads it: a one-dash name becomes `--name`, a value given apart
// becomes `--name=value` (so a value that starts with a dash stays a value, as it always was), and what is neither a
// flag nor a flag's value is set apart as a positional argument (`call TOOL JSON-ARGS`, `report REPORT`).
import type { FlagTable } from '@tollgate/cli'

const FLAG = /^--?([a-z][a-z-]*)(=[\s\S]*)?$/

/** The command line in the long form, and the positional arguments set apart. */
export interface LongForm {
  /** Flags only, each `--name`, `--name=value` or a declared short (`-h`). */
  readonly flags: string[]
  /** Positional arguments in order; `after` is the flag whose value came just before (none: a flag or the start). */
  readonly positionals: ReadonlyArray<{ readonly text: string; readonly after: string | undefined }>
  /** Flags given `--name=` with nothing after the `=` (parseArgs takes '' as a value; these commands never do). */
  readonly empty: string[]
}

/** Rewrites argv to the long form against `table` (which says the flags that take a value) and sets positionals apart. */
export function longForm(argv: readonly string[], table: FlagTable): LongForm {
  const shorts = new Set(Object.values(table).map((spec) => spec.short))
  const flags: string[] = []
  const positionals: Array<{ text: string; after: string | undefined }> = []
  const empty: string[] = []
  let lastValueOf: string | undefined
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string
    const match = FLAG.exec(arg)
    if (match === null) {
      positionals.push({ text: arg, after: lastValueOf })
      lastValueOf = undefined
      continue
    }
    const name = match[1] as string
    const inline = match[2]
    lastValueOf = undefined
    if (!arg.startsWith('--') && shorts.has(name) && inline === undefined) {
      flags.push(arg)
      continue
    }
    const spec = table[name]
    if (inline !== undefined) {
      if (inline === '=' && spec !== undefined && spec.type !== 'boolean') empty.push(name)
      flags.push(`--${name}${inline}`)
    } else if (spec !== undefined && spec.type !== 'boolean' && i + 1 < argv.length) {
      const value = argv[++i] as string
      if (value === '') empty.push(name)
      flags.push(`--${name}=${value}`)
    } else flags.push(`--${name}`)
    if (spec !== undefined && spec.type !== 'boolean') lastValueOf = name
  }
  return { flags, positionals, empty }
}
