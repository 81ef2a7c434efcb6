// One table per command declares each flag once — its type, default, bounds, what it needs and what it excludes —
// and that table drives the parser (`node:util` parseArgs, strict), `--help`, and the one loop that checks the
// relations. Checks that depend on a flag's *value* (a URL's scheme, a file's contents) stay with the command.
import { parseArgs } from 'node:util'
import { parseArgsProblem } from './usage.js'

/** One flag, declared once. */
export interface FlagSpec {
  /** `boolean` flags take no value; `string` flags take one; `integer` flags take a whole number within bounds. */
  readonly type: 'string' | 'boolean' | 'integer'
  /** Repeatable (`string` only): the values arrive as an array, in order. */
  readonly multiple?: boolean
  /** A one-letter alias, e.g. `h` for `-h`. */
  readonly short?: string
  /** The value's placeholder in `--help`, e.g. `N` or `FILE`. */
  readonly value?: string
  /** `integer` only: the least and greatest values accepted; `--help` prints them. */
  readonly min?: number
  readonly max?: number
  /** The value when the flag is absent (`integer`: a number, `string`: text); `--help` prints it. */
  readonly default?: number | string
  /** What `--help` shows as the default when it is not a literal value (e.g. "$TMPDIR/…"); overrides `default`. */
  readonly shown?: string
  /** Flags that must be given with this one: `--a needs --b`. */
  readonly needs?: readonly string[]
  /** Flags that must not be given with this one: `--a and --b exclude each other: give one`. */
  readonly conflicts?: readonly string[]
  /** One line of help. */
  readonly help: string
}

/** A command's flags, in the order `--help` lists them. */
export type FlagTable = Readonly<Record<string, FlagSpec>>

type ValueOf<S extends FlagSpec> = S['type'] extends 'boolean'
  ? boolean
  : S['type'] extends 'integer'
    ? number
    : S extends { multiple: true }
      ? string[]
      : string

/** The values read from argv: a flag with a `default` always has one, any other is absent unless given. */
export type FlagValues<T extends FlagTable> = {
  -readonly [K in keyof T as T[K] extends { default: number | string } ? K : never]: ValueOf<T[K]>
} & {
  -readonly [K in keyof T as T[K] extends { default: number | string } ? never : K]?: ValueOf<T[K]>
}

/** What `readFlags` found: help or the version asked for, one usage problem (naming flags, never a value), or the values. */
export type ReadFlags<T extends FlagTable> =
  | { readonly help: true }
  | { readonly version: true }
  | { readonly problem: string }
  | { readonly values: FlagValues<T> }

/** `--name`, or `--name` and `-s` as `--help` lists it. */
function flagLabel(name: string, spec: FlagSpec): string {
  return `${spec.short ? `-${spec.short}, ` : '    '}--${name}${spec.value ? ` ${spec.value}` : ''}`
}

function integerProblem(name: string, spec: FlagSpec): string {
  const min = spec.min ?? 0
  return spec.max === undefined
    ? `--${name} must be a whole number of at least ${min}`
    : `--${name} must be a whole number from ${min} to ${spec.max}`
}

/**
 * Reads argv against a table. Unknown flags, missing values and stray arguments become one problem each (a stray
 * argument is never echoed: it may be a secret); then, in table order, each given flag's bounds, needs and
 * conflicts are checked; `-h/--help` and `--version` (when the table declares them) win over every other problem
 * but a parse error.
 */
export function readFlags<const T extends FlagTable>(argv: readonly string[], table: T): ReadFlags<T> {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }> = {}
  for (const [name, spec] of Object.entries(table)) {
    for (const other of [...(spec.needs ?? []), ...(spec.conflicts ?? [])]) {
      if (!(other in table)) throw new TypeError(`flag table: --${name} names --${other}, which is not in the table`)
    }
    options[name] = {
      type: spec.type === 'boolean' ? 'boolean' : 'string',
      ...(spec.multiple ? { multiple: true } : {}),
      ...(spec.short ? { short: spec.short } : {}),
    }
  }
  let raw: Record<string, string | boolean | string[] | undefined>
  try {
    raw = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values as typeof raw
  } catch (error) {
    return { problem: parseArgsProblem(error) }
  }
  if (raw.help === true && 'help' in table) return { help: true }
  if (raw.version === true && 'version' in table) return { version: true }
  const values: Record<string, string | number | boolean | string[]> = {}
  for (const [name, spec] of Object.entries(table)) {
    const given = raw[name]
    if (given === undefined) {
      if (spec.default !== undefined) values[name] = spec.default
      continue
    }
    if (spec.type === 'integer') {
      const text = given as string
      const n = /^[0-9]{1,15}$/.test(text) ? Number(text) : Number.NaN
      if (!(n >= (spec.min ?? 0) && n <= (spec.max ?? Number.MAX_SAFE_INTEGER))) {
        return { problem: integerProblem(name, spec) }
      }
      values[name] = n
    } else {
      values[name] = given
    }
    for (const other of spec.needs ?? []) {
      if (raw[other] === undefined) return { problem: `--${name} needs --${other}` }
    }
    for (const other of spec.conflicts ?? []) {
      if (raw[other] !== undefined) return { problem: `--${name} and --${other} exclude each other: give one` }
    }
  }
  return { values: values as FlagValues<T> }
}

/** What `--help` says of a flag after its help line: its default, bounds and relations. */
function flagNotes(spec: FlagSpec): string {
  const notes: string[] = []
  const shown = spec.shown ?? (spec.default === undefined ? undefined : String(spec.default))
  if (shown !== undefined) notes.push(`default: ${shown}`)
  if (spec.type === 'integer')
    notes.push(spec.max === undefined ? `at least ${spec.min ?? 0}` : `${spec.min ?? 0}–${spec.max}`)
  if (spec.needs?.length) notes.push(`needs ${spec.needs.map((n) => `--${n}`).join(', ')}`)
  if (spec.conflicts?.length) notes.push(`not with ${spec.conflicts.map((n) => `--${n}`).join(', ')}`)
  return notes.length === 0 ? '' : ` (${notes.join('; ')})`
}

/** `--help` text from a table: `head`, a blank line, `options:` and one line a flag, then `tail`. */
export function flagHelp(head: string, table: FlagTable, tail = ''): string {
  const rows = Object.entries(table).map(
    ([name, spec]) => `  ${flagLabel(name, spec).padEnd(30)} ${spec.help}${flagNotes(spec)}`,
  )
  return `${head}\n\noptions:\n${rows.join('\n')}\n${tail}`
}
