// providercheck's flag tables, one a subcommand: each flag declared once, read by `readLongForm` and printed by
// --help. What is required depends on -sandbox or -live and what a value must be (a URL, mcp|rest) is checked by the
// command line's own code after the table.
import { type FlagTable, type FlagValues, readFlags } from '@tollgate/cli'
import { longForm } from './long-form-flags.js'

const TRANSPORT = { type: 'string', value: 'mcp|rest', help: 'the binding the provider serves' } as const
const BASE_URL = {
  type: 'string',
  value: 'URL',
  help: 'the MCP endpoint (mcp) or the base URL of the /v1/… routes (rest)',
} as const
const ALLOW_PRIVATE = { type: 'boolean', help: 'allow a loopback or private base URL (and plain http)' } as const
const ERA = {
  type: 'string',
  value: 'auto|2026-07-28|legacy',
  shown: 'auto',
  help: 'the MCP era to speak (mcp only)',
} as const
const EDGE_HEADER = {
  type: 'string',
  multiple: true,
  value: "'Name: value'",
  help: 'an edge/WAF header sent on every request (repeatable; only its name is ever printed)',
} as const
const HELP = { type: 'boolean', short: 'h', help: 'show this help and exit' } as const

/** The kit's run: `providercheck -sandbox …` or `providercheck -live …`. */
export const RUN_FLAGS = {
  sandbox: {
    type: 'boolean',
    conflicts: ['live'],
    help: 'every check, data-changing ones included, with a sandbox secret',
  },
  live: { type: 'boolean', help: 'the live contract check of a production endpoint: only what changes nothing' },
  transport: TRANSPORT,
  'allow-private': ALLOW_PRIVATE,
  'base-url': BASE_URL,
  tenant: { type: 'string', value: 'ID', help: 'the workspace the platform calls for' },
  customer: { type: 'string', value: 'REF', help: 'the fixture customer (required with --sandbox)' },
  transaction: { type: 'string', value: 'REF', help: 'the fixture transaction (required with --sandbox)' },
  subscription: { type: 'string', value: 'REF', help: 'the fixture subscription (required with --sandbox)' },
  json: { type: 'string', value: 'FILE', help: 'write the sealed report' },
  html: { type: 'string', value: 'FILE', help: 'write the report as one self-contained HTML page' },
  era: ERA,
  'edge-header': EDGE_HEADER,
  help: HELP,
  version: { type: 'boolean', help: 'print the version and exit' },
} as const satisfies FlagTable

/** `providercheck call … TOOL 'JSON-ARGS'`. */
export const CALL_FLAGS = {
  transport: TRANSPORT,
  'allow-private': ALLOW_PRIVATE,
  'base-url': BASE_URL,
  era: ERA,
  'edge-header': EDGE_HEADER,
  help: HELP,
} as const satisfies FlagTable

/** `providercheck report REPORT -o FILE`. */
export const REPORT_FLAGS = {
  o: { type: 'string', value: 'FILE', help: 'the HTML file to write' },
} as const satisfies FlagTable

type Positionals = ReturnType<typeof longForm>['positionals']

/** Help or the version asked for, one usage problem, or the values with the positional arguments set apart. */
export type LongFormRead<T extends FlagTable> =
  | { readonly help: true }
  | { readonly version: true }
  | { readonly message: string }
  | { readonly values: FlagValues<T>; readonly positionals: Positionals }

/** Reads argv (one dash or two) against `table`; positional arguments are set apart for the subcommand to judge. */
export function readLongForm<const T extends FlagTable>(argv: readonly string[], table: T): LongFormRead<T> {
  const { flags, positionals, empty } = longForm(argv, table)
  const read = readFlags(flags, table)
  if ('problem' in read) return { message: read.problem }
  if (!('values' in read)) return read
  // A value given as '' (`--json=`) is a value missing, as parseArgs would say of one not given at all.
  if (empty[0] !== undefined) return { message: `--${empty[0]} needs a value` }
  return { values: read.values, positionals }
}
