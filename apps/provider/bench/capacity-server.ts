// One provider replica for the capacity bench (bench/capacity.bench.ts), in a process of its own: this package on
// PostgreSQL (argv[2]: the URL, argv[3]: the schema), the demo ledger in the same schema, its real logging into
// /dev/null. Every statement it sends is counted here, by wrapping pg's Client.prototype.query (each call is one round
// trip: pg sends a query's parse/bind/execute/sync, or a simple query, and waits for its answer before the next on
// that connection), by statement name (the provider names its prepared statements) or, unnamed, by its first words.
// It also derives the transactions those statements make: a statement outside BEGIN…COMMIT is a transaction of its
// own (autocommit), BEGIN…COMMIT is one. Prints "READY <url>"; on SIGUSR2 one JSON line of the counts since start;
// SIGINT closes the provider and exits (the bench drops the schema).
import pg from 'pg'
import { pino } from 'pino'
import type { startProvider as StartProvider } from '../dist/index.js'

// The built package (dist/, what an installed provider runs; the bench script builds first), as bench/servers.ts
// imports it: a computed specifier, so that the bench bundler leaves it an import.
const { startProvider } = (await import(new URL('../dist/index.js', import.meta.url).href)) as {
  startProvider: typeof StartProvider
}

const [connectionString, schema] = process.argv.slice(2) as [string, string]
export const CAPACITY_SECRET = 'srmps_bench_0123456789abcdef0123456789abcdef'

/** Per statement label: how many were sent. */
const statements = new Map<string, number>()
let transactions = 0
const inTransaction = new WeakSet<object>()

type Query = (this: object, config: unknown, ...rest: unknown[]) => unknown
const prototype = pg.Client.prototype as unknown as { query: Query }
const original = prototype.query
prototype.query = function (this: object, config: unknown, ...rest: unknown[]) {
  const text = typeof config === 'string' ? config : ((config as { name?: string; text?: string } | null)?.name ?? '')
  const fallback = typeof config === 'object' && config !== null ? ((config as { text?: string }).text ?? '') : ''
  const label = labelOf(text === '' ? fallback : text)
  statements.set(label, (statements.get(label) ?? 0) + 1)
  if (/^BEGIN\b/i.test(label)) inTransaction.add(this)
  else if (/^(COMMIT|ROLLBACK)\b/i.test(label)) {
    inTransaction.delete(this)
    transactions++
  } else if (!inTransaction.has(this)) transactions++
  return original.call(this, config, ...rest)
}

/** A statement's name, or the first words of its text with the schema left out (labels stay the same across runs). */
function labelOf(text: string): string {
  if (/^tollgate_\w+$/.test(text)) return text
  return text.replaceAll(`${schema}.`, '').replace(/\s+/g, ' ').trim().slice(0, 48)
}

const p = await startProvider({
  secrets: [CAPACITY_SECRET],
  store: { kind: 'postgres', connectionString, schema },
  port: 0,
  logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
})
process.on('SIGUSR2', () => {
  process.stdout.write(`${JSON.stringify({ statements: Object.fromEntries(statements), transactions })}\n`)
})
process.once('SIGINT', () => {
  void p
    .close()
    .catch(() => {})
    .then(() => process.exit(0))
})
process.stdout.write(`READY ${p.url}\n`)
