// A replay answers the bytes the first call answered, on both stores: the recorded result is kept as written (a
// PostgreSQL JSONB column would hand the keys back in its own order). Raw HTTP, so the bytes are what is compared.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { signHeaders } from '@tollgate/signing'
import pg from 'pg'
import { demoLedgerStore, openPostgresStore } from '../src/index.js'
import { newKey, SECRET, startTestProvider, type TestProvider } from './helpers.js'
import { dropSchemas, PG_URL, probePostgres, uniqueSchema } from './postgres.js'

const pgSkip = await probePostgres()
const schema = uniqueSchema('replay')
after(async () => {
  if (pgSkip === undefined) await dropSchemas(schema)
})

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
}
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}

/** One signed 2026-07-28 tools/call; the response body's raw bytes. */
async function callBytes(url: string, name: string, args: unknown): Promise<Buffer> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name, arguments: args, _meta: ENVELOPE },
  })
  const u = new URL(url)
  const signed = signHeaders(SECRET, {
    method: 'POST',
    host: u.host,
    path: u.pathname,
    body: Buffer.from(body),
    key: '',
  })
  const res = await fetch(url, { method: 'POST', body, headers: { ...HEADERS, 'mcp-name': name, ...signed } })
  assert.equal(res.status, 200)
  return Buffer.from(await res.arrayBuffer())
}

const refundArgs = (key: string) => ({
  idempotency_key: key,
  request: {
    transaction_ref: 'ch_9001',
    amount: { amount_minor: 125, currency: 'USD' },
    reason: 'goodwill',
    dry_run: false,
  },
})

// The order the rules write a refund result in: neither sorted nor JSONB's (shorter keys first).
const WRITTEN_ORDER = ['idempotency_key', 'status', 'transaction_ref', 'amount', 'refund_ref', 'processed_at']

const NOW = Date.UTC(2026, 10, 30, 12)
const backends = [
  { name: 'SQLite', skip: undefined, store: undefined },
  { name: 'PostgreSQL', skip: pgSkip, store: { kind: 'postgres' as const, connectionString: PG_URL, schema } },
]

for (const backend of backends) {
  describe(`replays on ${backend.name}`, { skip: backend.skip }, () => {
    test('a refund replayed by key answers byte for byte what the first call answered', async () => {
      const p: TestProvider = await startTestProvider({
        now: () => NOW,
        ...(backend.store && { store: backend.store }),
      })
      try {
        const key = newKey()
        const first = await callBytes(p.url, 'sr_refund', refundArgs(key))
        const result = JSON.parse(first.toString('utf8')).result.structuredContent as Record<string, unknown>
        assert.deepEqual(Object.keys(result), WRITTEN_ORDER)
        assert.notDeepEqual(Object.keys(result), [...WRITTEN_ORDER].sort())
        const replay = await callBytes(p.url, 'sr_refund', refundArgs(key))
        assert.equal(replay.toString('utf8'), first.toString('utf8'))
        assert.ok(replay.equals(first))
        // sr_get_operation's result is the recorded result, in the same order.
        const op = JSON.parse((await callBytes(p.url, 'sr_get_operation', { idempotency_key: key })).toString('utf8'))
        assert.deepEqual(Object.keys(op.result.structuredContent.result), WRITTEN_ORDER)
      } finally {
        await p.stop()
      }
    })
  })
}

describe('both stores answer the same bytes', { skip: pgSkip }, () => {
  test('a ledger read (sr_get_transaction) is identical on SQLite and PostgreSQL', async () => {
    const started: TestProvider[] = []
    try {
      const sqlite = await startTestProvider({ now: () => NOW })
      started.push(sqlite)
      const postgres = await startTestProvider({
        now: () => NOW,
        store: { kind: 'postgres', connectionString: PG_URL, schema: `${schema}_read` },
      })
      started.push(postgres)
      const a = await callBytes(sqlite.url, 'sr_get_transaction', { transaction_ref: 'ch_1001' })
      const b = await callBytes(postgres.url, 'sr_get_transaction', { transaction_ref: 'ch_1001' })
      assert.equal(b.toString('utf8'), a.toString('utf8'))
    } finally {
      for (const p of started) await p.stop()
      await dropSchemas(`${schema}_read`)
    }
  })
})

describe('upgrading a PostgreSQL schema an earlier version made', { skip: pgSkip }, () => {
  test('JSONB columns are converted to TEXT on open, and their rows stay readable', async () => {
    const old = `${schema}_old`
    const c = new pg.Client({ connectionString: PG_URL })
    await c.connect()
    try {
      await c.query(`CREATE SCHEMA ${old}`)
      await c.query(`CREATE TABLE ${old}.operations (
        key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, operation TEXT NOT NULL, target_ref TEXT NOT NULL,
        status TEXT NOT NULL, result JSONB, refusal JSONB, owner TEXT NOT NULL, lease_until BIGINT NOT NULL,
        created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)`)
      await c.query(`CREATE TABLE ${old}.ledger_docs (kind TEXT NOT NULL, ref TEXT NOT NULL, doc JSONB NOT NULL,
        PRIMARY KEY (kind, ref))`)
      await c.query(`INSERT INTO ${old}.operations VALUES ('k-old', 'fp', 'refund', 'ch_1', 'succeeded',
        '{"status":"succeeded","amount_minor":5}', NULL, 'o', 0, 1, 1)`)
      const store = await openPostgresStore({ connectionString: PG_URL, schema: old })
      try {
        assert.deepEqual((await store.get('k-old'))?.result, { status: 'succeeded', amount_minor: 5 })
        await demoLedgerStore(store).seed([{ kind: 'customer', ref: 'cus_1', doc: { b: 1, a: 2 } }])
        assert.deepEqual(Object.keys((await demoLedgerStore(store).get('customer', 'cus_1')) ?? {}), ['b', 'a'])
      } finally {
        await store.close()
      }
      const types = await c.query(
        `SELECT table_name, column_name, data_type FROM information_schema.columns
         WHERE table_schema = $1 AND column_name IN ('result', 'refusal', 'doc') ORDER BY 1, 2`,
        [old],
      )
      assert.deepEqual(
        types.rows.map((r) => `${r.table_name}.${r.column_name}:${r.data_type}`),
        ['ledger_docs.doc:text', 'operations.refusal:text', 'operations.result:text'],
      )
    } finally {
      await c.end()
      await dropSchemas(old)
    }
  })
})
