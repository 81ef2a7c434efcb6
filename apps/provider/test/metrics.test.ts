// The admin port's Prometheus metrics, read the way Prometheus reads them: real calls over both bindings and both MCP
// eras, then GET /metrics on the admin listener, parsed; checked with Debian's promtool and scraped by a real
// Prometheus (both skipped with the reason when absent, failing under TOLLGATE_REQUIRE_SERVICES=1).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import {
  parseExposition,
  probePrometheus,
  probePromtool,
  promtoolCheckMetrics,
  type Sample,
  sampleSum,
  startPrometheus,
} from '@tollgate/test-support'
import {
  type BillingPort,
  DemoLedger,
  demoLedgerStore,
  openSqliteStore,
  type RefundCommand,
  type RefundOutcome,
} from '../src/index.js'
import { connect, delegateBilling, newKey, startTestProvider, type TestProvider } from './helpers.js'
import { errorCode, refundBody, rest } from './rest-helpers.js'

async function scrape(adminUrl: string): Promise<{ text: string; samples: Sample[]; type: string | null }> {
  const r = await fetch(`${adminUrl}/metrics`)
  assert.equal(r.status, 200)
  const text = await r.text()
  return { text, samples: parseExposition(text), type: r.headers.get('content-type') }
}

/** A raw request with a chosen Host header (fetch cannot send a foreign one). */
function rawPost(url: string, host: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { host, 'content-type': 'application/json' } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
    req.end(body)
  })
}

const refundArgs = (key: string, ref: string, minor: number) => ({
  idempotency_key: key,
  request: refundBody(ref, minor),
})

describe('provider metrics on the admin port', () => {
  let p: TestProvider
  const keys: string[] = []
  before(async () => {
    p = await startTestProvider({ adminPort: 0, maxBodyBytes: 4096 })
  })
  after(async () => {
    await p?.stop()
  })

  it('is off unless adminPort is given, and never on the public port', async () => {
    const plain = await startTestProvider()
    try {
      assert.equal(plain.adminUrl, undefined)
      assert.equal(plain.metrics, undefined)
    } finally {
      await plain.stop()
    }
    assert.ok(p.adminUrl !== undefined)
    assert.equal(new URL(p.adminUrl).hostname, '127.0.0.1')
    assert.notEqual(new URL(p.adminUrl).port, String(p.port))
    // The public port treats /metrics like any other unsigned path.
    assert.equal((await fetch(`${p.baseUrl}/metrics`)).status, 401)
    const admin = await fetch(`${p.adminUrl}/metrics`)
    assert.equal(admin.status, 200)
    assert.match(admin.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/)
  })

  it('counts tool calls by binding, era, tool and outcome, with replays and refusals, and no key or ref in a label', async () => {
    const before = (await scrape(p.adminUrl as string)).samples
    const count = (samples: Sample[], labels: Record<string, string>) =>
      sampleSum(samples, 'tollgate_provider_requests_total', labels) -
      sampleSum(before, 'tollgate_provider_requests_total', labels)

    const modern = await connect(p.url, 'modern')
    const k1 = newKey()
    keys.push(k1)
    try {
      assert.equal((await modern.callTool('sr_refund', refundArgs(k1, 'ch_1001', 101))).isError, false)
      // The same key again: replayed; the same key with another amount: idempotency_conflict.
      assert.equal((await modern.callTool('sr_refund', refundArgs(k1, 'ch_1001', 101))).isError, false)
      const conflict = await modern.callTool('sr_refund', refundArgs(k1, 'ch_1001', 102))
      assert.equal(
        conflict.structuredContent?.error && (conflict.structuredContent.error as { code: string }).code,
        'idempotency_conflict',
      )
      // ch_3001 refunds are answered pending.
      const k2 = newKey()
      keys.push(k2)
      const pending = await modern.callTool('sr_refund', refundArgs(k2, 'ch_3001', 100))
      assert.equal(pending.structuredContent?.status, 'pending')
    } finally {
      await modern.close()
    }
    const legacy = await connect(p.url, 'legacy')
    try {
      await legacy.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
      const open = (await scrape(p.adminUrl as string)).samples
      assert.equal(sampleSum(open, 'tollgate_provider_legacy_sessions_open'), 1)
    } finally {
      await legacy.close()
    }
    assert.equal((await rest(p.baseUrl, 'GET', '/v1/transactions/ch_1001')).status, 200)
    const tooMuch = await rest(p.baseUrl, 'POST', '/v1/refunds', {
      body: refundBody('ch_1001', 10 ** 9),
      key: newKey(),
    })
    assert.equal(errorCode(tooMuch), 'amount_exceeds_refundable')
    // Refusals before any tool: unsigned (REST, MCP), no route, too large, foreign Host.
    assert.equal((await rest(p.baseUrl, 'GET', '/v1/transactions/ch_1001', { unsigned: true })).status, 401)
    assert.equal((await fetch(p.url, { method: 'POST', body: '{}' })).status, 401)
    assert.equal((await rest(p.baseUrl, 'GET', '/v1/nowhere')).status, 404)
    const big = await rest(p.baseUrl, 'POST', '/v1/refunds', { body: 'x'.repeat(5000), key: newKey() })
    assert.equal(big.status, 413)
    assert.equal(await rawPost(p.url, 'evil.example', '{}'), 421)

    const { text, samples } = await scrape(p.adminUrl as string)
    const modernRefund = { binding: 'mcp', era: '2026-07-28', tool: 'sr_refund' }
    assert.equal(count(samples, { ...modernRefund, outcome: 'ok' }), 2)
    assert.equal(count(samples, { ...modernRefund, outcome: 'idempotency_conflict' }), 1)
    assert.equal(count(samples, { ...modernRefund, outcome: 'pending' }), 1)
    assert.equal(count(samples, { binding: 'mcp', era: '2025', tool: 'sr_get_transaction', outcome: 'ok' }), 1)
    assert.equal(count(samples, { binding: 'rest', era: 'rest', tool: 'sr_get_transaction', outcome: 'ok' }), 1)
    assert.equal(
      count(samples, { binding: 'rest', era: 'rest', tool: 'sr_refund', outcome: 'amount_exceeds_refundable' }),
      1,
    )
    assert.equal(
      sampleSum(samples, 'tollgate_provider_request_duration_seconds_count', modernRefund) -
        sampleSum(before, 'tollgate_provider_request_duration_seconds_count', modernRefund),
      4,
    )
    const replays = (result: string) =>
      sampleSum(samples, 'tollgate_provider_idempotent_replays_total', { operation: 'refund', result })
    assert.equal(replays('replayed'), 1)
    assert.equal(replays('conflict'), 1)
    const refusals = (binding: string, reason: string) =>
      sampleSum(samples, 'tollgate_provider_refusals_total', { binding, reason }) -
      sampleSum(before, 'tollgate_provider_refusals_total', { binding, reason })
    assert.equal(refusals('rest', 'signature'), 1)
    assert.equal(refusals('mcp', 'signature'), 1)
    assert.equal(refusals('rest', 'no_route'), 1)
    assert.equal(refusals('rest', 'body_too_large'), 1)
    assert.equal(refusals('none', 'host'), 1)
    // The pending count is a table scan, read at most every 15 s (the scrape before the calls read it): polled.
    for (let i = 0; ; i++) {
      const pending = sampleSum((await scrape(p.adminUrl as string)).samples, 'tollgate_provider_operations_pending')
      if (pending === 1) break
      assert.ok(i < 40 && pending === 0, `pending ${pending}`)
      await new Promise((r) => setTimeout(r, 500))
    }
    assert.equal(sampleSum(samples, 'tollgate_provider_operations_in_progress'), 0)
    assert.equal(sampleSum(samples, 'tollgate_provider_legacy_sessions_open'), 0)
    assert.ok(sampleSum(samples, 'tollgate_provider_billing_call_duration_seconds_count') > 0)
    assert.ok(sampleSum(samples, 'tollgate_provider_store_call_duration_seconds_count', { store: 'sqlite' }) > 0)
    assert.ok(sampleSum(samples, 'tollgate_provider_process_cpu_seconds_total') > 0)
    for (const secretish of [...keys, 'ch_1001', 'ch_3001', 'evil.example'])
      assert.ok(!text.includes(secretish), secretish)
  })

  it('passes promtool check metrics', async (t) => {
    const { skip } = probePromtool()
    if (skip !== undefined) return t.skip(skip)
    const { text } = await scrape(p.adminUrl as string)
    const checked = promtoolCheckMetrics(text)
    assert.ok(checked.ok, checked.output)
  })
})

describe('provider metrics: store and billing faults, work in progress', () => {
  it('counts a billing failure, and shows a refund in progress while billing has not answered', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => {
      release = r
    })
    let entered: () => void = () => {}
    const inside = new Promise<void>((r) => {
      entered = r
    })
    // The demo ledger on a store of its own, behind a wrapper that fails one read and holds refunds at a gate.
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-metrics-'))
    const ledgerStore = openSqliteStore(join(dir, 'ledger.sqlite'))
    const inner = new DemoLedger(demoLedgerStore(ledgerStore))
    await inner.seed()
    const p = await startTestProvider({
      adminPort: 0,
      billing: (() => {
        return delegateBilling(inner, {
          getTransaction: async (ref: string) => {
            if (ref === 'ch_2001') throw new Error('billing down')
            return inner.getTransaction(ref)
          },
          refund: async (key: string, command: RefundCommand): Promise<RefundOutcome> => {
            entered()
            await gate
            return (inner as BillingPort).refund(key, command)
          },
        })
      })(),
    })
    try {
      const failed = await rest(p.baseUrl, 'GET', '/v1/transactions/ch_2001')
      assert.ok(failed.status >= 500, failed.text)
      const slow = rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_1001', 100), key: newKey() })
      await inside
      const during = parseExposition(await (await fetch(`${p.adminUrl}/metrics`)).text())
      assert.equal(sampleSum(during, 'tollgate_provider_operations_in_progress'), 1)
      release()
      assert.equal((await slow).status, 200)
      const afterwards = parseExposition(await (await fetch(`${p.adminUrl}/metrics`)).text())
      assert.equal(sampleSum(afterwards, 'tollgate_provider_operations_in_progress'), 0)
      assert.equal(sampleSum(afterwards, 'tollgate_provider_billing_errors_total', { call: 'getTransaction' }), 1)
      assert.equal(sampleSum(afterwards, 'tollgate_provider_billing_errors_total', { call: 'refund' }), 0)
      assert.equal(
        sampleSum(afterwards, 'tollgate_provider_billing_call_duration_seconds_count', { call: 'refund' }),
        1,
      )
    } finally {
      release()
      await p.stop()
      await ledgerStore.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('a real Prometheus scraping the provider', () => {
  it('sees the target up and the refunds this test made', async (t) => {
    const { skip } = probePrometheus()
    if (skip !== undefined) return t.skip(skip)
    const p = await startTestProvider({ adminPort: 0 })
    const prometheus = await startPrometheus([{ job: 'provider', address: new URL(p.adminUrl as string).host }])
    try {
      const refunds = 3
      for (let i = 0; i < refunds; i++) {
        const r = await rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_1001', 100 + i), key: newKey() })
        assert.equal(r.status, 200, r.text)
      }
      await prometheus.waitFor('the provider target to be up', async () => {
        const targets = await prometheus.targets()
        return targets.some((x) => x.job === 'provider' && x.health === 'up') ? true : undefined
      })
      const seen = await prometheus.waitFor('the refunds in Prometheus', async () => {
        const r = await prometheus.query(
          'sum(tollgate_provider_requests_total{job="provider",binding="rest",tool="sr_refund",outcome="ok"})',
        )
        return r[0]?.value === refunds ? r[0].value : undefined
      })
      assert.equal(seen, refunds)
      const up = await prometheus.query('up{job="provider"}')
      assert.equal(up[0]?.value, 1)
    } finally {
      await prometheus.stop()
      await p.stop()
    }
  })
})
