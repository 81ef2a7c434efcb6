// fakemerchant's flags, declared once: the table drives the parser, the relations check and --help. What depends on
// a value's content (a --db path, --durability's words, the store's URL) is checked in `readPlan` after the table.
import { type FlagTable, type FlagValues, flagHelp, readFlags } from '@tollgate/cli'
import { dbPathProblem } from './db-path.js'
import { DEFAULT_DATABASE_SCHEMA } from './fakemerchant-store.js'

/** Ten minutes at most for either shutdown step: a stop longer than that is a mistake, not a drain. */
const TEN_MINUTES_MS = 600_000

export const FLAGS = {
  port: {
    type: 'integer',
    value: 'N',
    min: 0,
    max: 65_535,
    default: 12112,
    help: 'port to listen on (0 picks a free one)',
  },
  host: { type: 'string', value: 'ADDR', default: '127.0.0.1', help: 'address to listen on' },
  db: {
    type: 'string',
    value: 'FILE',
    conflicts: ['database-url'],
    help: 'SQLite file to keep data in across restarts',
    shown: 'a fresh file in a temporary folder, removed when fakemerchant exits',
  },
  durability: { type: 'string', value: 'power-loss|process-crash', help: "the SQLite store's durability" },
  'database-url': {
    type: 'string',
    value: 'URL',
    help: 'run on PostgreSQL instead (also DATABASE_URL; --db wins over it); data persists in the schema',
  },
  'database-schema': {
    type: 'string',
    value: 'NAME',
    shown: DEFAULT_DATABASE_SCHEMA,
    help: 'PostgreSQL schema for the keys and the demo ledger (created if absent; with --database-url or DATABASE_URL)',
  },
  'lease-ms': {
    type: 'integer',
    value: 'N',
    help: "how long a key's in-progress claim blocks others before it counts as abandoned by a crash",
    shown: '30000',
  },
  'settle-ms': {
    type: 'integer',
    value: 'N',
    help: 'how long a pending refund of the demo ledger waits before it settles',
    shown: '10000',
  },
  'retention-days': {
    type: 'integer',
    value: 'N',
    help: 'keys and results are kept this many days after their last change (at least 30)',
    shown: '30',
  },
  'public-host': {
    type: 'string',
    value: 'HOST',
    help: "host name the platform signs (your public host); default: the request's Host header",
  },
  'strip-prefix': {
    type: 'string',
    value: '/PREFIX',
    help: "path prefix your reverse proxy strips before forwarding; the platform's signature covers it",
  },
  'allowed-host': {
    type: 'string',
    multiple: true,
    value: 'NAME',
    help:
      'another Host name to answer for (repeatable); localhost, 127.0.0.1, [::1], --host and --public-host are ' +
      'allowed by default, any other Host gets 421',
  },
  'admin-port': {
    type: 'integer',
    value: 'N',
    min: 0,
    max: 65_535,
    help: 'serve Prometheus metrics (/metrics) and /livez, /readyz on this port, apart from the public one (off unless given; 0 picks a free one)',
  },
  'admin-host': {
    type: 'string',
    value: 'ADDR',
    needs: ['admin-port'],
    help: 'address of the admin port (default 127.0.0.1: keep it off the public network)',
  },
  'shutdown-delay-ms': {
    type: 'integer',
    value: 'N',
    min: 0,
    max: TEN_MINUTES_MS,
    default: 1_000,
    help:
      'on SIGTERM, how long to go on serving while /readyz answers 503, so a load balancer takes this replica out of ' +
      'rotation first (SIGINT, a Ctrl-C, does not wait; SIGHUP does not stop: it reloads the TLS files and the secrets file)',
  },
  'shutdown-timeout-ms': {
    type: 'integer',
    value: 'N',
    min: 0,
    max: TEN_MINUTES_MS,
    shown: '10000',
    help: 'then, how long requests already received may take to be answered before they are cut; the exit status is 0',
  },
  'tls-cert': {
    type: 'string',
    value: 'FILE',
    needs: ['tls-key'],
    help:
      'serve HTTPS with this certificate (PEM, chain allowed); re-read on SIGHUP without dropping open connections ' +
      '(a bad pair: the old one is kept). The admin port stays plain HTTP',
  },
  'tls-key': { type: 'string', value: 'FILE', needs: ['tls-cert'], help: "the certificate's private key (PEM)" },
  'signing-secret-file': {
    type: 'string',
    value: 'FILE',
    help:
      'read the secret(s) from FILE instead of SIGNING_SECRET: one or two (old, then new), one a line; re-read on ' +
      'SIGHUP (a file that switches sandbox/production or holds a malformed line is refused, the old secrets kept)',
  },
  help: { type: 'boolean', short: 'h', help: 'show this help and exit' },
  version: { type: 'boolean', help: 'print the version and exit' },
} as const satisfies FlagTable

export const HELP = flagHelp(
  `usage: SIGNING_SECRET=srmps_<random> fakemerchant [--port 12112] [--host 127.0.0.1] [options]
       fakemerchant -h|--help | --version
Serves MCP at http://HOST:PORT/mcp and REST at http://HOST:PORT/v1/… (REST base URL http://HOST:PORT), and
GET /livez (the process serves) and /readyz (the store takes writes; 503 while not, or while stopping) unsigned.`,
  FLAGS,
  `
environment:
  SIGNING_SECRET   the sandbox signing secret (srmps_…); two comma-separated secrets while rotating
  MCP_SESSION_KEY  MAC key of 2025-era session ids (≥ 32 characters): give every replica the same one
  DATABASE_URL     PostgreSQL, as --database-url (a flag wins over it)

A database that cannot be reached at start is waited for (one line on stderr; /readyz 503 until it opens).
`,
)

export type FakemerchantFlags = FlagValues<typeof FLAGS>

/** What the command line asked for: help, the version, a usage problem, or the flags (their values checked). */
export type ReadCommandLine =
  | { readonly help: true }
  | { readonly version: true }
  | { readonly problem: string }
  | { readonly flags: FakemerchantFlags }

/** Reads argv against FLAGS, then the checks that depend on a value's content. */
export function readCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): ReadCommandLine {
  const read = readFlags(argv, FLAGS)
  if (!('values' in read)) return read
  const flags = read.values
  if (flags['admin-port'] !== undefined && flags['admin-port'] !== 0 && flags['admin-port'] === flags.port)
    return { problem: '--admin-port must differ from --port' }
  if (flags.durability !== undefined && flags.durability !== 'power-loss' && flags.durability !== 'process-crash')
    return { problem: '--durability must be power-loss or process-crash' }
  const dbProblem = flags.db === undefined ? undefined : dbPathProblem(flags.db)
  if (dbProblem !== undefined) return { problem: `--db ${dbProblem}` }
  const sessionKey = env.MCP_SESSION_KEY
  if (sessionKey !== undefined && sessionKey.length < 32)
    return { problem: 'MCP_SESSION_KEY must be at least 32 characters' }
  return { flags }
}
