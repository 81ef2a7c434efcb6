// One provider replica for the capacity bench (bench/capacity.bench.ts), in a process of its own: this package on
// PostgreSQL (argv[2]: the URL, argv[3]: the schema), its real logging into /dev/null, and as billing (argv[4]) either
// 'demo' — the demo ledger in the same schema, as fakemerchant runs — or 'port': a merchant's billing system outside
// PostgreSQL (the demo ledger on a SQLite file of its own, behind the plain BillingPort methods, so that PostgreSQL
// holds only the idempotency keys, as in a merchant's deployment). Every statement it sends is counted here, by wrapping pg's Client.prototype.query (each call is one round
// trip: pg sends a query's parse/bind/execute/sync, or a simple query, and waits for its answer before the next on
// that connection), by statement name (the provider names its prepared statements) or, unnamed, by its first words.
// It also derives the transactions those statements make: a statement outside BEGIN…COMMIT is a transaction of its
// own (autocommit), BEGIN…COMMIT is one. Prints "READY <url>"; on SIGUSR2 one JSON line of the counts since start;
// SIGINT closes the provider and exits (the bench drops the schema).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { pino } from 'pino'
import type {
  BillingPort,
  DemoLedger as DemoLedgerClass,
  demoLedgerStore as DemoLedgerStoreOf,
  openSqliteStore as OpenSqliteStore,
  startProvider as StartProvider,
} from '../dist/index.js'

// The built package (dist/, what an installed provider runs; the bench script builds first), as bench/servers.ts
// imports it: a computed specifier, so that the bench bundler leaves it an import.
const provider = (await import(new URL('../dist/index.js', import.meta.url).href)) as {
  startProvider: typeof StartProvider
  DemoLedger: typeof DemoLedgerClass
  demoLedgerStore: typeof DemoLedgerStoreOf
  openSqliteStore: typeof OpenSqliteStore
}

const [connectionString, schema, billingKind = 'demo'] = process.argv.slice(2) as [string, string, string?]
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

/** The merchant's billing system: the demo ledger on a SQLite file of its own, only the BillingPort methods shown. */
async function outsideBilling(): Promise<{ billing: BillingPort; dispose(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-capacity-billing-'))
  const store = provider.openSqliteStore(join(dir, 'ledger.sqlite'), { durability: 'process-crash' })
  const ledger = new provider.DemoLedger(provider.demoLedgerStore(store))
  await ledger.seed()
  const methods = [
    'describe',
    'findCustomers',
    'getCustomer',
    'listTransactions',
    'getTransaction',
    'getSubscription',
    'assessRefund',
    'assessCancel',
    'refund',
    'cancelSubscription',
    'listPaymentAttempts',
    'lookup',
  ] as const
  const billing: Record<string, unknown> = {}
  for (const m of methods) {
    const f = (ledger as unknown as Record<string, unknown>)[m]
    if (typeof f === 'function') billing[m] = f.bind(ledger)
  }
  return { billing: billing as unknown as BillingPort, dispose: () => rmSync(dir, { recursive: true, force: true }) }
}
const outside = billingKind === 'port' ? await outsideBilling() : undefined

const p = await provider.startProvider({
  secrets: [CAPACITY_SECRET],
  ...(outside !== undefined ? { billing: outside.billing } : { demoLedger: {} }),
  store: { kind: 'postgres', connectionString, schema },
  port: 0,
  // BENCH_LOG=1: the replicas' log lines on stderr (to see why a call failed).
  logger: pino(
    { level: 'info' },
    pino.destination({ dest: process.env.BENCH_LOG === '1' ? 2 : '/dev/null', sync: false }),
  ),
})
process.on('SIGUSR2', () => {
  process.stdout.write(`${JSON.stringify({ statements: Object.fromEntries(statements), transactions })}\n`)
})
process.once('SIGINT', () => {
  void p
    .close()
    .catch(() => {})
    .then(() => {
      outside?.dispose()
      process.exit(0)
    })
})
process.stdout.write(`READY ${p.url}\n`)
