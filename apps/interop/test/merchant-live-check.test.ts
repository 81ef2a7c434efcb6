// The live contract check against the worked example in production (issue 29 §4): examples/merchant-billing's
// server started from its environment alone — an srmp_ secret in SIGNING_SECRET_FILE, serving TLS itself with a
// certificate of a test CA, its billing tables and its key store in a PostgreSQL schema pair of this test's own —
// and `providercheck -live` as a child process over https (the CA through NODE_EXTRA_CA_CERTS), both bindings, with
// fixtures of the example's own data (ACC-1001, PAY-77001, PLN-5001). Every row of every table of the billing schema
// and of the key store's schema is the same before and after each run.
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { signHeaders } from '@tollgate/signing'
import { makeTestCertificateAuthority, probePostgres, type TestCertificateAuthority } from '@tollgate/test-support'
import pg from 'pg'
import {
  type ExampleServer,
  httpsRequest,
  runProvidercheckCli,
  startExampleServer,
} from './support/merchant-template.js'

const REQUIRED = process.env.TOLLGATE_REQUIRE_SERVICES === '1'
const LIVE_SECRET = `srmp_${randomBytes(24).toString('hex')}`
const TENANT = randomUUID()
// The example's demo rows (seedBillingDemo): the account, its renewal payment and its active plan.
const FIXTURES = ['-customer', 'ACC-1001', '-transaction', 'PAY-77001', '-subscription', 'PLN-5001']

const postgres = await probePostgres()
if (postgres.skip !== undefined && REQUIRED) throw new Error(`${postgres.skip}, and TOLLGATE_REQUIRE_SERVICES=1`)

/** Every row of every table of `schemas`, as sorted JSON lines per `schema.table` (the whole content, no sample). */
async function allRows(schemas: readonly string[]): Promise<Record<string, string[]>> {
  const client = new pg.Client({ connectionString: postgres.url })
  await client.connect()
  try {
    const tables = await client.query<{ table_schema: string; table_name: string }>(
      `SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_schema = ANY($1) AND table_type = 'BASE TABLE' ORDER BY 1, 2`,
      [schemas],
    )
    const out: Record<string, string[]> = {}
    for (const { table_schema, table_name } of tables.rows) {
      const name = `"${table_schema}"."${table_name.replaceAll('"', '""')}"`
      const rows = await client.query(`SELECT * FROM ${name}`)
      out[`${table_schema}.${table_name}`] = rows.rows.map((r) => JSON.stringify(r)).sort()
    }
    return out
  } finally {
    await client.end()
  }
}

describe('providercheck -live against the worked example in production, over https', { skip: postgres.skip }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tollgate-live-template-'))
  const schema = `acme_live_${process.pid}_${Date.now().toString(36)}`
  const schemas = [schema, `${schema}_keys`]
  let ca: TestCertificateAuthority
  let server: ExampleServer | undefined

  before(async () => {
    ca = makeTestCertificateAuthority()
    const leaf = ca.issue({ dnsNames: ['localhost'], ips: ['127.0.0.1'] })
    const database = { DATABASE_URL: postgres.url, DATABASE_SCHEMA: schema, SHUTDOWN_DELAY_MS: '0' }
    // The merchant's billing system already holds its customers: the example's demo rows, written by a sandbox trial
    // of the same server on the same schema (ACME_SEED_DEMO is for sandbox trials, never production), then stopped.
    const trial = await startExampleServer(
      { ...database, HOST: '127.0.0.1', PORT: '0', SIGNING_SECRET: `srmps_${randomUUID()}`, ACME_SEED_DEMO: '1' },
      scratch,
    )
    assert.equal(await trial.stop(), 0, trial.stderr())
    const secrets = join(scratch, 'signing-secrets')
    writeFileSync(secrets, `${LIVE_SECRET}\n`)
    writeFileSync(join(scratch, 'tls.crt'), leaf.cert)
    writeFileSync(join(scratch, 'tls.key'), leaf.key)
    server = await startExampleServer(
      {
        ...database,
        HOST: '127.0.0.1',
        PORT: '0',
        SIGNING_SECRET_FILE: secrets,
        TLS_CERT_FILE: join(scratch, 'tls.crt'),
        TLS_KEY_FILE: join(scratch, 'tls.key'),
      },
      scratch,
    )
    assert.match(server.url, /^https:\/\//)
    // Production traffic before the check: a refund the platform made (signed, over REST), so the key store holds an
    // operation and the billing tables a refund row that the live check must leave as they are.
    const url = new URL(server.url)
    const key = `${TENANT}:ticket:${randomUUID()}:refund:1`
    const body = JSON.stringify({
      transaction_ref: 'PAY-77002',
      amount: { amount_minor: 1500, currency: 'USD' },
      reason: 'service_issue',
      dry_run: false,
    })
    const path = '/v1/refunds'
    const refund = await httpsRequest(Number(url.port), ca.caCert, {
      method: 'POST',
      path,
      headers: {
        host: url.host,
        'content-type': 'application/json',
        'idempotency-key': key,
        ...signHeaders(LIVE_SECRET, { method: 'POST', host: url.host, path, key, body: Buffer.from(body) }),
      },
      body,
    })
    assert.equal(refund.status, 200, refund.body)
    assert.match(refund.body, /"status":"succeeded"/)
  })

  after(async () => {
    await server?.stop()
    if (postgres.skip === undefined) {
      const client = new pg.Client({ connectionString: postgres.url })
      await client.connect()
      for (const s of schemas) await client.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`)
      await client.end()
    }
    ca?.dispose()
    rmSync(scratch, { recursive: true, force: true })
  })

  for (const transport of ['mcp', 'rest'] as const) {
    test(`-live -transport ${transport} passes and no row of the billing database or the key store changes`, async (t) => {
      const url = new URL((server as ExampleServer).url)
      const baseUrl = transport === 'mcp' ? url.href : url.origin
      const before = await allRows(schemas)
      // Both schemas exist and the billing tables hold the fixtures (an empty database would prove nothing).
      assert.ok(
        Object.keys(before).some((t) => t.startsWith(`${schema}_keys.`)),
        `no key store tables: ${Object.keys(before)}`,
      )
      assert.ok(
        (before[`${schema}_keys.operations`]?.length ?? 0) > 0,
        'the key store holds the earlier refund (an empty one would prove less)',
      )
      for (const ref of ['ACC-1001', 'PAY-77001', 'PLN-5001', 'RFD-'])
        assert.ok(
          Object.entries(before).some(([t, rows]) => t.startsWith(`${schema}.`) && rows.some((r) => r.includes(ref))),
          ref,
        )
      t.diagnostic(
        `rows before: ${Object.entries(before)
          .map(([table, rows]) => `${table} ${rows.length}`)
          .join(', ')}`,
      )
      const args = ['-live', '-transport', transport, '-allow-private', '-base-url', baseUrl, '-tenant', TENANT]
      const run = await runProvidercheckCli([...args, ...FIXTURES], LIVE_SECRET, ca.caFile, 'live')
      assert.deepEqual(await allRows(schemas), before, `the live check changed a row:\n${run.stdout}`)
      assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`)
      assert.match(run.stdout, /live \(production: only what changes nothing\)/)
      // The reads ran on the fixtures (passed, not skipped for want of one), and the refund was never sent.
      for (const id of ['get_customer', 'get_transaction', 'get_subscription'])
        assert.match(run.stdout, new RegExp(`^${id} +pass`, 'm'), id)
      assert.match(run.stdout, /^refund +skip +not_applicable +changes data/m)
    })
  }
})
