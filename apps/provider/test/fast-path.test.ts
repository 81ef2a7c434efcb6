// The modern tools/call fast path answers byte-for-byte what the SDK's modern leg answers; everything it does not
// take (errors of every kind) goes to the SDK. Checked by sending the same requests to a provider with the fast path
// and one without.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { signHeaders } from '@tollgate/signing'
import { SECRET, startTestProvider, type TestProvider } from './helpers.js'

let fast: TestProvider
let sdk: TestProvider
before(async () => {
  // One clock for both: the demo data's times are relative to it (two starts can straddle a second boundary).
  const t = Date.now()
  fast = await startTestProvider({ modernFastPath: true, now: () => t })
  sdk = await startTestProvider({ modernFastPath: false, now: () => t })
})
after(async () => {
  await fast.stop()
  await sdk.stop()
})

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}

async function send(url: string, message: unknown, headers: Record<string, string>) {
  const body = JSON.stringify(message)
  const u = new URL(url)
  const res = await fetch(url, {
    method: 'POST',
    body,
    headers: {
      ...headers,
      ...signHeaders(SECRET, { method: 'POST', host: u.host, path: u.pathname, body: Buffer.from(body), key: '' }),
    },
  })
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
}

const call = (name: string, args: unknown, meta: Record<string, unknown> = ENVELOPE, id: unknown = 7) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: meta },
})
const headersFor = (name: string) => ({
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': name,
})

const CASES: [string, unknown, Record<string, string>][] = [
  ['a read', call('sr_get_transaction', { transaction_ref: 'ch_1001' }), headersFor('sr_get_transaction')],
  ['a string id', call('sr_describe', {}, ENVELOPE, 'abc'), headersFor('sr_describe')],
  ['a not_found error envelope', call('sr_get_customer', { customer_ref: 'cus_x' }), headersFor('sr_get_customer')],
  [
    'a dry-run refusal',
    call('sr_refund', {
      request: {
        transaction_ref: 'ch_2002',
        amount: { amount_minor: 1, currency: 'EUR' },
        reason: 'goodwill',
        dry_run: true,
      },
    }),
    headersFor('sr_refund'),
  ],
  ['unknown key', call('sr_get_operation', { idempotency_key: 'nope' }), headersFor('sr_get_operation')],
  [
    'invalid arguments (the invalid_request envelope, same as the SDK)',
    call('sr_get_customer', { customer_ref: '' }),
    headersFor('sr_get_customer'),
  ],
  ['an unknown tool (SDK answers)', call('sr_nope', {}), headersFor('sr_nope')],
  [
    'a call with a stray Mcp-Session-Id (ignored)',
    call('sr_describe', {}),
    { ...headersFor('sr_describe'), 'mcp-session-id': 'stray' },
  ],
  ['Mcp-Name disagreeing with the body (SDK answers)', call('sr_describe', {}), headersFor('sr_get_customer')],
  [
    'an envelope without capabilities (SDK answers)',
    call('sr_describe', {}, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }),
    headersFor('sr_describe'),
  ],
  [
    'another version (SDK answers)',
    call('sr_describe', {}),
    { ...headersFor('sr_describe'), 'mcp-protocol-version': '2099-01-01' },
  ],
]

for (const [what, message, headers] of CASES) {
  test(`fast path and SDK answer ${what} identically`, async () => {
    const answeredBefore = fast.diagnostics.fastPathAnswered
    const a = await send(fast.url, message, headers)
    // Who answered: the fast path for the well-formed calls, the SDK for the rest (a test that cannot tell them apart
    // would still pass with the fast path off).
    assert.equal(fast.diagnostics.fastPathAnswered - answeredBefore, what.includes('(SDK answers)') ? 0 : 1)
    assert.equal(sdk.diagnostics.fastPathAnswered, 0)
    const b = await send(sdk.url, message, headers)
    if (what.includes('(ignored)')) assert.equal(a.status, 200)
    assert.equal(a.status, b.status)
    assert.equal(a.type, b.type)
    assert.equal(a.text, b.text)
  })
}

test('results are written from integers: the bytes parse with integers only (no 2000.0)', async () => {
  const { parsePlain } = await import('@tollgate/strict-json')
  for (const [name, args] of [
    ['sr_get_transaction', { transaction_ref: 'ch_2001' }],
    ['sr_list_transactions', { customer_ref: 'cus_2001' }],
    ['sr_get_subscription', { subscription_ref: 'sub_1001' }],
  ] as const) {
    for (const p of [fast, sdk]) {
      const r = await send(p.url, call(name, args), headersFor(name))
      assert.equal(r.status, 200)
      assert.doesNotThrow(() =>
        parsePlain(Buffer.from(r.text), { maxBytes: 1 << 20, maxDepth: 64, integersOnly: true }),
      )
      assert.match(r.text, /"amount_minor":\d+[,}]/)
    }
  }
})
