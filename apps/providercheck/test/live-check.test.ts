// Issue 29 §4: `providercheck -live`, the live contract check of a production endpoint. It runs only what changes
// nothing, so every row of the provider's database — its key store and its billing ledger — is the same after the
// run as before; the data-changing checks are skipped not_applicable; a provider that fails the profile fails it.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { DemoLedger, demoLedgerStore, openSqliteStore, startProvider } from '@tollgate/provider'
import Database from 'better-sqlite3'
import { CHECK_IDS, main, runKit } from '../src/index.js'
import { startFaultProxy } from './support/fault-proxy.js'
import { forwardingPort } from './support/forwarding-port.js'
import { FIXTURES, verdicts } from './support/kit-harness.js'

const LIVE_SECRET = 'srmp_providercheck_live_test_0123456789abcdef'
const SANDBOX_SECRET = 'srmps_providercheck_live_test_0123456789abcdef'

/** What the live check runs and what it never does: the data-changing checks are skipped, everything else passes. */
const CHANGES_DATA = [
  'refund',
  'refund_replay',
  'refund_conflict',
  'refund_exceeds',
  'get_operation',
  'cancel_at_period_end',
  'cancel_again',
]

function expectedVerdicts(transport: 'mcp' | 'rest'): Record<string, string> {
  return Object.fromEntries(
    CHECK_IDS.map((id) => {
      if (CHANGES_DATA.includes(id)) return [id, 'skip not_applicable']
      if (transport === 'mcp' && id === 'signature_idempotency_key') return [id, 'skip not_applicable']
      if (transport === 'rest' && id === 'mcp_profile') return [id, 'skip not_applicable']
      return [id, 'pass']
    }),
  )
}

interface LiveProvider {
  mcpUrl: string
  restUrl: string
  /** Every row of every table of both SQLite files (key store, billing ledger), in a stable order. */
  rows(): Record<string, unknown[]>
  close(): Promise<void>
}

// A production provider as a merchant runs one: an srmp_ secret and its own billing system passed as `billing` (the
// demo ledger on a SQLite file of its own stands in for it), the key store on another SQLite file.
async function liveProvider(): Promise<LiveProvider> {
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-live-'))
  const ledgerFile = join(dir, 'ledger.sqlite')
  const storeFile = join(dir, 'provider.sqlite')
  const ledgerStore = openSqliteStore(ledgerFile)
  const ledger = new DemoLedger(demoLedgerStore(ledgerStore))
  await ledger.seed()
  const provider = await startProvider({
    secrets: [LIVE_SECRET],
    store: { kind: 'sqlite', file: storeFile },
    // The demo ledger's data behind a port of the test's own: a DemoLedger itself is refused in production.
    billing: forwardingPort(ledger),
    logger: false,
  })
  return {
    mcpUrl: provider.url,
    restUrl: provider.baseUrl,
    rows: () => ({ ...dump(ledgerFile, 'ledger'), ...dump(storeFile, 'store') }),
    async close() {
      await provider.close()
      await ledgerStore.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function dump(file: string, prefix: string): Record<string, unknown[]> {
  const db = new Database(file, { readonly: true, fileMustExist: true })
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all() as { name: string }[]
    const out: Record<string, unknown[]> = {}
    for (const { name } of tables) {
      const rows = db.prepare(`SELECT * FROM "${name.replaceAll('"', '""')}"`).all()
      out[`${prefix}.${name}`] = rows.map((r) => JSON.stringify(r)).sort()
    }
    return out
  } finally {
    db.close()
  }
}

async function cli(argv: string[], env: Record<string, string>) {
  const out: string[] = []
  const err: string[] = []
  const code = await main(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) })
  return { code, out, err }
}

function liveArgv(transport: 'mcp' | 'rest', url: string, ...extra: string[]): string[] {
  return ['-live', '-transport', transport, '-allow-private', '-base-url', url, '-tenant', FIXTURES.tenant, ...extra]
}

const WITH_FIXTURES = ['-customer', 'cus_1001', '-transaction', 'ch_1001', '-subscription', 'sub_1001']

for (const transport of ['mcp', 'rest'] as const) {
  test(`-live over ${transport}: every check that changes nothing passes, and no row of the database changes`, async () => {
    const provider = await liveProvider()
    const dir = mkdtempSync(join(tmpdir(), 'providercheck-live-out-'))
    try {
      const url = transport === 'mcp' ? provider.mcpUrl : provider.restUrl
      const before = provider.rows()
      assert.ok(Object.keys(before).length >= 2, 'both SQLite files hold tables')
      assert.ok(
        Object.values(before).some((rows) => rows.length > 0),
        'the ledger is seeded (an empty database would prove nothing)',
      )
      const json = join(dir, 'report.json')
      const html = join(dir, 'report.html')
      const env = { PROVIDERCHECK_LIVE_SIGNING_SECRET: LIVE_SECRET }
      const run = await cli(liveArgv(transport, url, ...WITH_FIXTURES, '-json', json, '-html', html), env)
      assert.deepEqual(provider.rows(), before, 'a live check changed a row of the database')
      assert.equal(run.code, 0, run.out.join('\n'))
      assert.match(run.out[0] as string, /: transport \w+, live \(production: only what changes nothing\), /)
      const lines = Object.fromEntries(run.out.slice(1, 1 + CHECK_IDS.length).map((l) => [l.split(/\s+/)[0], l]))
      for (const [id, verdict] of Object.entries(expectedVerdicts(transport)))
        assert.match(lines[id] as string, new RegExp(`^${id} +${verdict.replace(' ', ' +')}`), id)
      assert.match(lines.refund as string, /changes data: the live check runs only what changes nothing/)
      // mcp_profile is the line right after describe (seed 002, Test Etme step 3).
      assert.deepEqual(Object.keys(lines).slice(0, 3), ['discovery', 'describe', 'mcp_profile'])

      const report = JSON.parse(readFileSync(json, 'utf8'))
      assert.equal(report.target.environment, 'production')
      assert.equal(report.outcome, 'pass')
      assert.doesNotMatch(readFileSync(json, 'utf8'), /srmp_/)
      const verified = await cli(['verify', json], env)
      assert.equal(verified.code, 0, verified.err.join('\n'))
      // Sealed with this production secret: another one does not verify it.
      const other = await cli(['verify', json], { PROVIDERCHECK_LIVE_SIGNING_SECRET: `${LIVE_SECRET}x` })
      assert.equal(other.code, 1)
      const page = readFileSync(html, 'utf8')
      assert.match(page, new RegExp(`>${transport} \\(production\\)<`))
      assert.match(page, /HMAC-SHA256 with the production signing secret/)
    } finally {
      await provider.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
}

test('-live with no fixtures runs discovery, describe, the profile, the dry-run-free reads it can and the signature checks', async () => {
  const provider = await liveProvider()
  try {
    const before = provider.rows()
    const run = await runKit({
      live: true,
      transport: 'rest',
      baseUrl: provider.restUrl,
      secret: LIVE_SECRET,
      allowPrivate: true,
      fixtures: { tenant: FIXTURES.tenant },
    })
    const got = verdicts(run.results)
    assert.equal(run.passed, true, JSON.stringify(got))
    assert.equal(run.environment, 'production')
    for (const id of ['discovery', 'describe', 'get_operation_unknown', 'signature_tool_call', 'signature_stale'])
      assert.equal(got[id], 'pass', id)
    for (const id of ['find_customers', 'get_customer', 'list_transactions', 'get_transaction', 'get_subscription'])
      assert.equal(got[id], 'skip not_applicable', id)
    assert.match(run.results.find((r) => r.id === 'get_transaction')?.reason ?? '', /no -transaction given/)
    assert.deepEqual(provider.rows(), before)
  } finally {
    await provider.close()
  }
})

test('a production provider that fails the profile fails the live check (exit 1)', async () => {
  const provider = await liveProvider()
  const proxy = await startFaultProxy(provider.mcpUrl, LIVE_SECRET, 'duplicated_tool')
  try {
    const before = provider.rows()
    const run = await cli(liveArgv('mcp', proxy.url, ...WITH_FIXTURES), {
      PROVIDERCHECK_LIVE_SIGNING_SECRET: LIVE_SECRET,
    })
    assert.equal(run.code, 1)
    assert.match(run.out.find((l) => l.startsWith('mcp_profile')) ?? '', /^mcp_profile +fail +mcp_tool_duplicated/)
    assert.match(run.out.at(-1) as string, /: FAIL$/)
    assert.deepEqual(provider.rows(), before)
  } finally {
    await proxy.close()
    await provider.close()
  }
})

test('-live takes a production secret only, -sandbox a sandbox one only; each refusal is one line, exit 2', async () => {
  const argv = liveArgv('mcp', 'http://127.0.0.1:9/mcp')
  const sandboxSecret = await cli(argv, { PROVIDERCHECK_LIVE_SIGNING_SECRET: SANDBOX_SECRET })
  assert.equal(sandboxSecret.code, 2)
  assert.deepEqual(sandboxSecret.err, [
    'providercheck: PROVIDERCHECK_LIVE_SIGNING_SECRET must hold a production signing secret (srmp_…): -live checks a production endpoint; a sandbox is checked with -sandbox',
    'see providercheck --help',
  ])
  // The sandbox variable is never read by -live.
  const wrongVariable = await cli(argv, { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: LIVE_SECRET })
  assert.equal(wrongVariable.code, 2)
  assert.equal(wrongVariable.err[0], 'providercheck: missing: PROVIDERCHECK_LIVE_SIGNING_SECRET (environment)')
  const both = await cli([...argv, '-sandbox'], { PROVIDERCHECK_LIVE_SIGNING_SECRET: LIVE_SECRET })
  assert.equal(both.err[0], 'providercheck: --sandbox and --live exclude each other: give one')
  const sandboxRun = await cli(['-sandbox', ...argv.slice(1), ...WITH_FIXTURES], {
    PROVIDERCHECK_SANDBOX_SIGNING_SECRET: LIVE_SECRET,
  })
  assert.equal(sandboxRun.code, 2)
  assert.match(sandboxRun.err[0] as string, /PROVIDERCHECK_SANDBOX_SIGNING_SECRET must hold a sandbox signing secret/)
  for (const r of [sandboxSecret, wrongVariable, sandboxRun]) assert.doesNotMatch(r.err.join('\n'), /0123456789/)
  // The library refuses the same mix-ups before any request.
  await assert.rejects(
    runKit({
      live: true,
      baseUrl: 'http://127.0.0.1:9/mcp',
      secret: SANDBOX_SECRET,
      allowPrivate: true,
      fixtures: FIXTURES,
    }),
    { code: 'ERR_PROVIDERCHECK_CONFIG' },
  )
  await assert.rejects(
    runKit({ baseUrl: 'http://127.0.0.1:9/mcp', secret: LIVE_SECRET, allowPrivate: true, fixtures: FIXTURES }),
    { code: 'ERR_PROVIDERCHECK_CONFIG' },
  )
})
