// runProvidercheck: the kit as a function a merchant's CI calls, answering the sealed report object.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import {
  type BillingPort,
  DemoLedger,
  demoLedgerStore,
  openSqliteStore,
  startProvider,
  type Transaction,
} from '@tollgate/provider'
import { runProvidercheck, verifyReport } from '../src/index.js'
import { FIXTURES, freshTarget, SECRET } from './support/kit-harness.js'

for (const transport of ['mcp', 'rest'] as const) {
  test(`over ${transport}, a conformant provider's report passes, is sealed and lists every check`, async () => {
    const target = await freshTarget(undefined, 'json', {}, transport)
    try {
      const seen: string[] = []
      const report = await runProvidercheck({
        transport,
        baseUrl: target.url,
        secret: SECRET,
        allowPrivate: true,
        fixtures: FIXTURES,
        onResult: (r) => seen.push(r.id),
      })
      assert.equal(report.outcome, 'pass', JSON.stringify(report.checks.filter((c) => c.verdict === 'fail')))
      assert.equal(report.target.transport, transport)
      assert.equal(report.summary.fail, 0)
      assert.deepEqual(
        report.checks.map((c) => c.id),
        seen,
      )
      assert.equal(verifyReport(Buffer.from(JSON.stringify(report)), SECRET).ok, true)
    } finally {
      await target.close()
    }
  })
}

test('a failing provider gives a failing report naming the check, with what was sent and received', async () => {
  const target = await freshTarget('replay_differs')
  try {
    const report = await runProvidercheck({
      baseUrl: target.url,
      secret: SECRET,
      allowPrivate: true,
      fixtures: FIXTURES,
    })
    assert.equal(report.outcome, 'fail')
    const failed = report.checks.filter((c) => c.verdict === 'fail')
    assert.ok(failed.length > 0)
    assert.ok(failed.every((c) => (c.exchanges?.length ?? 0) > 0))
  } finally {
    await target.close()
  }
})

test('a loopback base URL fails discovery unless allowPrivate, and every other check is skipped (or does not apply over MCP)', async () => {
  const report = await runProvidercheck({ baseUrl: 'http://127.0.0.1:9/mcp', secret: SECRET, fixtures: FIXTURES })
  assert.equal(report.outcome, 'fail')
  assert.deepEqual([report.checks[0]?.id, report.checks[0]?.code], ['discovery', 'base_url_rejected'])
  assert.deepEqual(
    new Set(report.checks.slice(1).map((c) => `${c.verdict} ${c.code}`)),
    new Set(['skip dependency_failed', 'skip not_applicable']),
  )
})

// Issue 23 §3: an adapter mistake reaches the merchant's report by name. A sandbox provider whose billing port answers
// transactions without `settlement` names the schema path in its internal_error; the kit's reason carries it.
for (const transport of ['mcp', 'rest'] as const) {
  test(`over ${transport}, a port's invalid object is named in the failing check's reason`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'providercheck-fault-'))
    const ledgerStore = openSqliteStore(join(dir, 'ledger.sqlite'))
    const ledger = new DemoLedger(demoLedgerStore(ledgerStore))
    await ledger.seed()
    // The demo ledger, except its transactions lack `settlement` (an adapter mistake the compiler cannot see).
    const billing: BillingPort = Object.assign(Object.create(ledger) as DemoLedger, {
      getTransaction: async (ref: string) => {
        const found = await ledger.getTransaction(ref)
        if (found === undefined) return undefined
        const { settlement: _, ...withoutSettlement } = found
        return withoutSettlement as Transaction
      },
    })
    const provider = await startProvider({
      secrets: [SECRET],
      billing,
      store: { kind: 'sqlite', file: join(dir, 'keys.sqlite') },
      logger: false,
    })
    try {
      const report = await runProvidercheck({
        transport,
        baseUrl: transport === 'mcp' ? provider.url : provider.baseUrl,
        secret: SECRET,
        allowPrivate: true,
        fixtures: FIXTURES,
      })
      const check = report.checks.find((c) => c.id === 'get_transaction')
      assert.equal(check?.verdict, 'fail')
      assert.match(check?.reason ?? '', /internal_error \(500\) saying ".*transaction\.settlement: required.*"/)
    } finally {
      await provider.close()
      ledgerStore.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
}
