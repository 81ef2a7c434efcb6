// The client against the real provider (apps/provider on a fresh temp SQLite file), in both eras.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { startProvider } from '@tollgate/provider'
import { PlatformClient } from '../src/index.js'

const SECRET = 'srmps_platform_client_real_0123456789'
const CONTEXT = { correlationId: '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6', channel: 'ticket' }
let provider: Awaited<ReturnType<typeof startProvider>>
let dir: string

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'platform-client-'))
  provider = await startProvider({
    secrets: [SECRET],
    store: { kind: 'sqlite', file: join(dir, 'p.sqlite') },
    logger: false,
    demoLedger: {},
  })
})
after(async () => {
  await provider.close()
  rmSync(dir, { recursive: true, force: true })
})

for (const era of ['2026-07-28', 'legacy'] as const) {
  test(`${era}: every read tool answers a contract-valid object, and tools/list lists the profile`, async () => {
    const c = new PlatformClient({ baseUrl: provider.url, secret: SECRET, allowPrivate: true, era })
    const reads: [string, Record<string, unknown>, string, unknown][] = [
      ['sr_describe', {}, 'contract_version', '1.0'],
      ['sr_get_customer', { customer_ref: 'cus_1001' }, 'customer_ref', 'cus_1001'],
      ['sr_get_transaction', { transaction_ref: 'ch_1001' }, 'transaction_ref', 'ch_1001'],
      ['sr_get_subscription', { subscription_ref: 'sub_1001' }, 'subscription_ref', 'sub_1001'],
    ]
    for (const [name, args, field, value] of reads) {
      const out = await c.callTool(name, args, CONTEXT)
      assert.equal(out.kind, 'result', name)
      assert.equal(out.kind === 'result' && out.era, era)
      assert.equal(out.kind === 'result' && (out.value as Record<string, unknown>)[field], value, name)
    }
    const missing = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_nope' }, CONTEXT)
    assert.equal(missing.kind === 'error' && `${missing.code} ${missing.status}`, 'not_found 404')
    const listing = await c.listTools({ maxPages: 5 })
    const names = listing.pages.flatMap((p) => p.tools).map((t) => (t as { name: string }).name)
    assert.ok(names.includes('sr_refund') && names.includes('sr_cancel_subscription'))
  })

  test(`${era}: a refund with a key replays identically and a wrong-amount reuse is a 409`, async () => {
    const c = new PlatformClient({ baseUrl: provider.url, secret: SECRET, allowPrivate: true, era })
    const key = `t:ticket:${era}:refund:1`
    const request = {
      transaction_ref: 'ch_1001',
      amount: { amount_minor: 100, currency: 'USD' },
      reason: 'service_issue',
      dry_run: false,
    }
    const first = await c.callTool('sr_refund', { idempotency_key: key, request }, CONTEXT)
    const again = await c.callTool('sr_refund', { idempotency_key: key, request }, CONTEXT)
    assert.equal(first.kind, 'result')
    assert.deepEqual(again.kind === 'result' && again.value, first.kind === 'result' && first.value)
    const other = await c.callTool(
      'sr_refund',
      { idempotency_key: key, request: { ...request, amount: { amount_minor: 101, currency: 'USD' } } },
      CONTEXT,
    )
    assert.equal(other.kind === 'error' && `${other.code} ${other.status}`, 'idempotency_conflict 409')
  })
}

test('the real provider refuses a broken tool-call signature with 401 after a good handshake', async () => {
  const c = new PlatformClient({ baseUrl: provider.url, secret: SECRET, allowPrivate: true, era: 'legacy' })
  await assert.rejects(
    c.attempt('sr_describe', {}, CONTEXT, { signatureFor: (phase) => (phase === 'tools/call' ? 'broken' : 'valid') }),
    { code: 'ERR_PLATFORM_HTTP_STATUS', status: 401, phase: 'tools/call' },
  )
})

test('SSE answers from the real provider are read in both eras', async () => {
  const sseDir = mkdtempSync(join(tmpdir(), 'platform-client-sse-'))
  const sse = await startProvider({
    secrets: [SECRET],
    store: { kind: 'sqlite', file: join(sseDir, 'p.sqlite') },
    logger: false,
    demoLedger: {},
    responseMode: 'sse',
    legacyResponseMode: 'sse',
  })
  try {
    for (const era of ['2026-07-28', 'legacy'] as const) {
      const c = new PlatformClient({ baseUrl: sse.url, secret: SECRET, allowPrivate: true, era })
      const out = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
      assert.equal(out.kind === 'result' && (out.value as { transaction_ref: string }).transaction_ref, 'ch_1001', era)
    }
  } finally {
    await sse.close()
    rmSync(sseDir, { recursive: true, force: true })
  }
})

test('REST: every read route answers a contract-valid object, with a key containing ":" in the operations path', async () => {
  const c = new PlatformClient({ baseUrl: provider.baseUrl, secret: SECRET, allowPrivate: true, transport: 'rest' })
  const reads: [string, Record<string, unknown>][] = [
    ['sr_describe', {}],
    ['sr_find_customers', { email: 'alex@example.com' }],
    ['sr_get_customer', { customer_ref: 'cus_1001' }],
    ['sr_list_transactions', { customer_ref: 'cus_1001' }],
    ['sr_get_transaction', { transaction_ref: 'ch_1001' }],
    ['sr_get_subscription', { subscription_ref: 'sub_1001' }],
    ['sr_get_operation', { idempotency_key: 't:ticket:rest:refund:unseen' }],
    ['sr_list_payment_attempts', { updated_since: '2026-01-01T00:00:00Z' }],
  ]
  for (const [name, args] of reads) {
    const out = await c.callTool(name, args, CONTEXT)
    assert.equal(out.kind, 'result', `${name}: ${out.kind === 'error' ? out.code : ''}`)
    assert.equal(out.era, null)
  }
  const missing = await c.callTool('sr_get_customer', { customer_ref: 'search' }, CONTEXT)
  assert.equal(missing.kind === 'error' && `${missing.code} ${missing.status}`, 'not_found 404')
})

test('one key across bindings: a refund made over REST replays over MCP, and REST replays it byte for byte', async () => {
  const rest = new PlatformClient({ baseUrl: provider.baseUrl, secret: SECRET, allowPrivate: true, transport: 'rest' })
  const mcp = new PlatformClient({ baseUrl: provider.url, secret: SECRET, allowPrivate: true })
  const key = 't:ticket:cross:refund:1'
  const request = {
    transaction_ref: 'ch_1001',
    amount: { amount_minor: 50, currency: 'USD' },
    reason: 'service_issue',
    dry_run: false,
  }
  const first = await rest.callTool('sr_refund', { idempotency_key: key, request }, CONTEXT)
  const again = await rest.callTool('sr_refund', { idempotency_key: key, request }, CONTEXT)
  const overMcp = await mcp.callTool('sr_refund', { idempotency_key: key, request }, CONTEXT)
  assert.equal(first.kind, 'result')
  assert.ok(first.kind === 'result' && again.kind === 'result' && first.body?.equals(again.body as Buffer))
  assert.deepEqual(overMcp.kind === 'result' && overMcp.value, first.kind === 'result' && first.value)
  const conflict = await mcp.callTool(
    'sr_refund',
    { idempotency_key: key, request: { ...request, amount: { amount_minor: 51, currency: 'USD' } } },
    CONTEXT,
  )
  assert.equal(conflict.kind === 'error' && `${conflict.code} ${conflict.status}`, 'idempotency_conflict 409')
})

test('a result is typed by the tool: sr_get_transaction answers a Transaction (the compiler knows its fields)', async () => {
  const c = new PlatformClient({ baseUrl: provider.url, secret: SECRET, allowPrivate: true })
  const out = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)
  assert.equal(out.kind, 'result')
  if (out.kind !== 'result') return
  const createdAt: string = out.value.created_at
  const cents: number = out.value.amount.amount_minor
  // @ts-expect-error — created_at is an RFC 3339 string, so this mistake fails the type-check
  const unixSeconds: number = out.value.created_at
  // @ts-expect-error — a transaction has no such field
  void out.value.internal_note
  assert.match(createdAt, /^\d{4}-\d{2}-\d{2}T/)
  assert.equal(cents, 4999)
  assert.equal(typeof unixSeconds, 'string')
})
