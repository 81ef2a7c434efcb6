// The REST binding over real HTTP on 127.0.0.1, on SQLite and PostgreSQL: every route of the seed's table, the
// order of handling (413 → 401 → 404/405 → 400 → rules), the Idempotency-Key rules, the key field of the signature,
// statuses, byte-identical replays, one key across both bindings, and configuration (prefix, host, token, secrets).
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, test } from 'node:test'
import { contractValidator, type Transaction } from '@tollgate/contract'
import { pino } from 'pino'
import type { ProviderOptions, RefundCommand } from '../src/index.js'
import {
  type AnyClient,
  connect,
  type DemoBilling,
  demoBilling,
  newKey,
  REFUNDS_ONLY,
  SECRET,
  startTestProvider,
  type TestProvider,
} from './helpers.js'
import { backends, errorCode, REJECTED, type RestReply, refundBody, rest } from './rest-helpers.js'

const ALL = await backends()
after(async () => {
  for (const b of ALL) await b.cleanup()
})

const cancelBody = (at_period_end: boolean, dry_run = false) => ({ at_period_end, reason: 'forgot_to_cancel', dry_run })

function assertEnvelope(r: RestReply, status: number, code: string) {
  assert.equal(r.status, status, r.text)
  assert.equal(r.type, 'application/json')
  assert.equal(errorCode(r), code, r.text)
  const v = contractValidator('error.json')(r.json)
  assert.equal(v.valid, true, v.valid ? '' : v.errors)
}

function assertOk(r: RestReply, schema?: string) {
  assert.equal(r.status, 200, r.text)
  assert.equal(r.type, 'application/json')
  if (schema !== undefined) {
    const v = contractValidator(schema)(r.json)
    assert.equal(v.valid, true, v.valid ? '' : v.errors)
  }
}

for (const backend of ALL) {
  const start = (o: Partial<ProviderOptions> = {}) => {
    const store = backend.store()
    return startTestProvider({ ...(store !== undefined && { store }), ...o })
  }

  describe(`REST routes and rules on ${backend.name}`, { skip: backend.skip }, () => {
    let p: TestProvider
    let mcp: AnyClient
    let clock = Date.now()
    before(async () => {
      p = await start({ now: () => clock, demoLedger: { settleAfterMs: 60_000 } })
      mcp = await connect(p.url, 'modern')
    })
    after(async () => {
      await mcp?.close()
      await p?.stop()
    })
    const base = () => p.baseUrl
    const refundCount = async (ref: string) =>
      ((await rest(base(), 'GET', `/v1/transactions/${ref}`)).json.refunds as unknown[]).length
    const operationStatus = async (key: string) =>
      (await rest(base(), 'GET', `/v1/operations/${encodeURIComponent(key)}`)).json.status

    test('every read route answers 200 with exactly the bytes the MCP binding puts in structuredContent', async () => {
      const reads: [string, string, unknown, string, Record<string, unknown>, string][] = [
        ['GET', '/v1/describe', undefined, 'sr_describe', {}, 'describe.json'],
        [
          'POST',
          '/v1/customers/search',
          { customer_ref: 'cus_1001' },
          'sr_find_customers',
          { customer_ref: 'cus_1001' },
          'customer-candidates.json',
        ],
        ['GET', '/v1/customers/cus_1001', undefined, 'sr_get_customer', { customer_ref: 'cus_1001' }, 'customer.json'],
        [
          'GET',
          '/v1/customers/cus_1001/transactions',
          undefined,
          'sr_list_transactions',
          { customer_ref: 'cus_1001' },
          'transaction-list.json',
        ],
        [
          'GET',
          '/v1/transactions/ch_1001',
          undefined,
          'sr_get_transaction',
          { transaction_ref: 'ch_1001' },
          'transaction.json',
        ],
        [
          'GET',
          '/v1/subscriptions/sub_1001',
          undefined,
          'sr_get_subscription',
          { subscription_ref: 'sub_1001' },
          'subscription.json',
        ],
        [
          'GET',
          '/v1/operations/never-used-key',
          undefined,
          'sr_get_operation',
          { idempotency_key: 'never-used-key' },
          'operation.json',
        ],
        [
          'POST',
          '/v1/payment-attempts/list',
          { updated_since: '2020-01-01T00:00:00Z', limit: 2 },
          'sr_list_payment_attempts',
          { updated_since: '2020-01-01T00:00:00Z', limit: 2 },
          'payment-attempt-list.json',
        ],
      ]
      for (const [method, path, body, tool, args, schema] of reads) {
        const r = await rest(base(), method, path, { body })
        assertOk(r, schema)
        const m = await mcp.callTool(tool, args)
        assert.equal(m.isError ?? false, false)
        assert.equal(r.text, m.content[0]?.text, `${method} ${path}`)
      }
      assert.equal((await rest(base(), 'GET', '/v1/operations/never-used-key')).json.status, 'unknown')
    })

    test('GET /v1/customers/search looks up the ref "search" (404); the search is POST, and needs an identifier', async () => {
      assertEnvelope(await rest(base(), 'GET', '/v1/customers/search'), 404, 'not_found')
      assertEnvelope(await rest(base(), 'POST', '/v1/customers/search', { body: {} }), 400, 'invalid_request')
      const found = await rest(base(), 'POST', '/v1/customers/search', { body: { transaction_ref: 'ch_2001' } })
      assert.deepEqual(found.json, { candidates: [{ customer_ref: 'cus_2001' }] })
    })

    test('unknown objects are 404 not_found; a refund of an unknown charge records no key', async () => {
      assertEnvelope(await rest(base(), 'GET', '/v1/customers/cus_nope'), 404, 'not_found')
      assertEnvelope(await rest(base(), 'GET', '/v1/customers/cus_nope/transactions'), 404, 'not_found')
      assertEnvelope(await rest(base(), 'GET', '/v1/transactions/ch_nope'), 404, 'not_found')
      assertEnvelope(await rest(base(), 'GET', '/v1/subscriptions/sub_nope'), 404, 'not_found')
      const key = newKey()
      assertEnvelope(
        await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_nope', 100), key }),
        404,
        'not_found',
      )
      assert.equal(await operationStatus(key), 'unknown')
    })

    test('dry runs answer would_succeed without a key and change nothing', async () => {
      const before = (await rest(base(), 'GET', '/v1/transactions/ch_1001')).text
      const r = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_1001', 2000, true) })
      assertOk(r, 'refund-result.json')
      assert.equal(r.json.status, 'would_succeed')
      const c = await rest(base(), 'POST', '/v1/subscriptions/sub_1001/cancel', { body: cancelBody(true, true) })
      assertOk(c, 'cancel-result.json')
      assert.equal(c.json.status, 'would_succeed')
      assert.equal((await rest(base(), 'GET', '/v1/transactions/ch_1001')).text, before)
      assert.equal((await rest(base(), 'GET', '/v1/subscriptions/sub_1001')).json.phase, 'active')
    })

    test('Idempotency-Key: missing on a real call, present on a dry run, or malformed → 400, nothing changes', async () => {
      const before = await refundCount('ch_1001')
      const key = newKey()
      const cases: [string, string, Parameters<typeof rest>[3]][] = [
        ['/v1/refunds', 'real refund without key', { body: refundBody('ch_1001', 100) }],
        ['/v1/refunds', 'dry run with key', { body: refundBody('ch_1001', 100, true), key }],
        ['/v1/refunds', '256-character key', { body: refundBody('ch_1001', 100), key: 'k'.repeat(256) }],
        ['/v1/subscriptions/sub_1001/cancel', 'real cancel without key', { body: cancelBody(true) }],
        ['/v1/subscriptions/sub_1001/cancel', 'dry cancel with key', { body: cancelBody(true, true), key }],
      ]
      for (const [path, what, o] of cases) {
        const r = await rest(base(), 'POST', path, o)
        assertEnvelope(r, 400, 'invalid_request')
        assert.match(String((r.json.error as { message: string }).message), /Idempotency-Key/, what)
      }
      assert.equal(await refundCount('ch_1001'), before)
      assert.equal(await operationStatus(key), 'unknown')
      assert.equal((await rest(base(), 'GET', '/v1/subscriptions/sub_1001')).json.phase, 'active')
    })

    test('two Idempotency-Key headers on a real refund → 400, nothing changes', async () => {
      // Node joins repeated headers with ", ": the platform would have signed that value.
      const r = await rest(base(), 'POST', '/v1/refunds', {
        body: refundBody('ch_1001', 100),
        signKey: 'a, b',
        headers: { 'idempotency-key': ['a', 'b'] },
      })
      assertEnvelope(r, 400, 'invalid_request')
      assert.equal(await operationStatus('a'), 'unknown')
      assert.equal(await operationStatus('a, b'), 'unknown')
    })

    test('a real refund succeeds once; the same request (any key order, any whitespace) replays the same status and bytes', async () => {
      const key = newKey()
      const first = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_9001', 2000), key })
      assertOk(first, 'refund-result.json')
      assert.equal(first.json.status, 'succeeded')
      assert.equal(first.json.idempotency_key, key)
      const reordered = `{ "dry_run": false, "reason": "customer_request",\n "amount": {"currency":"USD","amount_minor":2000}, "transaction_ref": "ch_9001" }`
      for (const body of [refundBody('ch_9001', 2000), reordered]) {
        const again = await rest(base(), 'POST', '/v1/refunds', { body, key })
        assert.equal(again.status, first.status)
        assert.equal(again.text, first.text)
      }
      const op = await rest(base(), 'GET', `/v1/operations/${encodeURIComponent(key)}`)
      assertOk(op, 'operation.json')
      assert.deepEqual(op.json.result, first.json)
      // The key's ':' may also travel unescaped: the parameter is decoded once either way.
      assert.equal((await rest(base(), 'GET', `/v1/operations/${key}`)).text, op.text)
      assert.equal((await refundCount('ch_9001')) >= 1, true)
    })

    test('path parameters are decoded exactly once: a key holding "%41" and "/" is found under its escaped form', async () => {
      const key = `${newKey()}/k%41x`
      assertOk(await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_9001', 5), key }))
      // encodeURIComponent: '/' → %2F, '%' → %25; decoding twice would look up ".../kAx" instead.
      const op = await rest(base(), 'GET', `/v1/operations/${encodeURIComponent(key)}`)
      assertOk(op, 'operation.json')
      assert.equal(op.json.status, 'succeeded')
      assert.equal(op.json.idempotency_key, key)
    })

    test('the same key with another request is 409 idempotency_conflict and runs nothing', async () => {
      const key = newKey()
      assertOk(await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_9001', 100), key }))
      const before = await refundCount('ch_9001')
      const r = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_9001', 101), key })
      assertEnvelope(r, 409, 'idempotency_conflict')
      assert.equal((r.json.error as { retryable: boolean }).retryable, false)
      assertEnvelope(
        await rest(base(), 'POST', '/v1/subscriptions/sub_1001/cancel', { body: cancelBody(true), key }),
        409,
        'idempotency_conflict',
      )
      assert.equal(await refundCount('ch_9001'), before)
    })

    test('refusals are 422 with their codes, and a refused key replays the same 422 bytes', async () => {
      const cases: [unknown, string][] = [
        [refundBody('ch_1001', 5000), 'amount_exceeds_refundable'],
        [refundBody('ch_1001', 100, false, 'EUR'), 'currency_mismatch'],
        [refundBody('ch_2002', 100, false, 'EUR'), 'not_refundable'],
        [refundBody('ch_5001', 100), 'account_restricted'],
        [refundBody('ch_6001', 100), 'merchant_hold'],
        [refundBody('ch_6002', 100), 'x_refund_window_closed'],
      ]
      for (const [body, code] of cases) {
        const key = newKey()
        const first = await rest(base(), 'POST', '/v1/refunds', { body, key })
        assertEnvelope(first, 422, code)
        const again = await rest(base(), 'POST', '/v1/refunds', { body, key })
        assert.equal(again.status, 422)
        assert.equal(again.text, first.text)
        assert.equal(await operationStatus(key), 'failed')
      }
      assertEnvelope(
        await rest(base(), 'POST', '/v1/subscriptions/sub_2001/cancel', { body: cancelBody(false), key: newKey() }),
        422,
        'already_canceled',
      )
      assertEnvelope(
        await rest(base(), 'POST', '/v1/subscriptions/sub_3001/cancel', { body: cancelBody(false, true) }),
        422,
        'subscription_not_active',
      )
    })

    test('a real cancel succeeds once and replays byte-identically', async () => {
      const key = newKey('cancel_subscription')
      const first = await rest(base(), 'POST', '/v1/subscriptions/sub_1001/cancel', { body: cancelBody(true), key })
      assertOk(first, 'cancel-result.json')
      assert.equal(first.json.status, 'succeeded')
      const again = await rest(base(), 'POST', '/v1/subscriptions/sub_1001/cancel', { body: cancelBody(true), key })
      assert.equal(again.status, 200)
      assert.equal(again.text, first.text)
      assert.equal((await rest(base(), 'GET', '/v1/subscriptions/sub_1001')).json.cancel_at_period_end, true)
    })

    test('a pending refund replays its recorded bytes, then its final form once settled', async () => {
      const key = newKey()
      const first = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_3001', 700), key })
      assertOk(first, 'refund-result.json')
      assert.equal(first.json.status, 'pending')
      const again = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_3001', 700), key })
      assert.equal(again.text, first.text)
      clock += 61_000
      const settled = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_3001', 700), key })
      assertOk(settled, 'refund-result.json')
      assert.equal(settled.json.status, 'succeeded')
      assert.equal(settled.json.refund_ref, first.json.refund_ref)
      const later = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_3001', 700), key })
      assert.equal(later.text, settled.text)
      assert.equal(await operationStatus(key), 'succeeded')
    })

    test('bodies that are not strict JSON (duplicate keys, 2000.0, BOM, trailing bytes) → 400, nothing changes', async () => {
      const before = await refundCount('ch_9001')
      const good = JSON.stringify(refundBody('ch_9001', 2000))
      const bodies = [
        '{"transaction_ref":"ch_9001","transaction_ref":"ch_9001","amount":{"amount_minor":2000,"currency":"USD"},"reason":"customer_request","dry_run":false}',
        good.replace('2000', '2000.0'),
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(good)]),
        `${good} {}`,
        '[]',
        good.replace('2000', '20.5'),
      ]
      const why = [
        /same member name twice/,
        /fraction or exponent where an integer is required/,
        /byte order mark/,
        /content after the JSON value/,
        /must be a JSON object/,
        /fraction or exponent/,
      ]
      const keys: string[] = []
      for (const [i, body] of bodies.entries()) {
        const key = newKey()
        keys.push(key)
        const r = await rest(base(), 'POST', '/v1/refunds', { body, key })
        assertEnvelope(r, 400, 'invalid_request')
        assert.match((r.json.error as { message: string }).message, why[i] as RegExp)
      }
      assertEnvelope(
        await rest(base(), 'POST', '/v1/customers/search', { body: '{"email":"a","email":"b"}' }),
        400,
        'invalid_request',
      )
      assert.equal(await refundCount('ch_9001'), before)
      for (const key of keys) assert.equal(await operationStatus(key), 'unknown')
    })

    test('a GET with a body, and a POST body without Content-Type: application/json → 400', async () => {
      assertEnvelope(await rest(base(), 'GET', '/v1/describe', { body: '{}' }), 400, 'invalid_request')
      const key = newKey()
      const body = refundBody('ch_9001', 100)
      assertEnvelope(
        await rest(base(), 'POST', '/v1/refunds', { body, key, noContentType: true }),
        400,
        'invalid_request',
      )
      assertEnvelope(
        await rest(base(), 'POST', '/v1/refunds', { body, key, headers: { 'content-type': 'text/plain' } }),
        400,
        'invalid_request',
      )
      assert.equal(await operationStatus(key), 'unknown')
      const charset = await rest(base(), 'POST', '/v1/customers/search', {
        body: { customer_ref: 'cus_1001' },
        headers: { 'content-type': 'application/json; charset=utf-8' },
      })
      assertOk(charset)
    })

    test('unknown routes are 404; a known path with another method is 405 with Allow; bad escapes are 400', async () => {
      for (const path of ['/v1/nope', '/v2/describe', '/', '/v1/describe/', '/v1/customers/cus_1001/x']) {
        assertEnvelope(await rest(base(), 'GET', path), 404, 'not_found')
      }
      const wrong: [string, string, string][] = [
        ['GET', '/v1/refunds', 'POST'],
        ['POST', '/v1/describe', 'GET'],
        ['PUT', '/v1/customers/cus_1001', 'GET'],
        ['DELETE', '/v1/subscriptions/sub_1001/cancel', 'POST'],
        ['GET', '/v1/payment-attempts/list', 'POST'],
      ]
      for (const [method, path, allow] of wrong) {
        const r = await rest(base(), method, path, method === 'POST' || method === 'PUT' ? { body: {} } : {})
        assertEnvelope(r, 405, 'invalid_request')
        assert.equal(r.allow, allow, `${method} ${path}`)
      }
      assertEnvelope(await rest(base(), 'GET', '/v1/customers/%E0%A4%A'), 400, 'invalid_request')
    })

    test('a body over 1 MiB is 413 before the signature is even looked at', async () => {
      const big = Buffer.alloc(1024 * 1024 + 1, 0x20)
      for (const o of [{ unsigned: true }, {}]) {
        const r = await rest(base(), 'POST', '/v1/customers/search', { body: big, ...o })
        assertEnvelope(r, 413, 'invalid_request')
      }
      // Without a Content-Length (chunked), the body is cut once it grows past the cap.
      const chunked = await new Promise<number>((resolve, reject) => {
        const req = request(new URL('/v1/customers/search', base()), { method: 'POST' }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', reject)
        req.setHeader('content-type', 'application/json')
        for (let i = 0; i < 17; i++) req.write(Buffer.alloc(64 * 1024, 0x20))
        req.end()
      })
      assert.equal(chunked, 413)
    })

    test('401 with the envelope comes before routing: unsigned, wrong secret, stale, or tampered', async () => {
      const stale = new Date(Date.now() - 6 * 60_000)
      const cases: [string, string, Parameters<typeof rest>[3]][] = [
        ['GET', '/v1/describe', { unsigned: true }],
        ['GET', '/v1/nope', { unsigned: true }],
        ['POST', '/v1/describe', { unsigned: true, body: {} }],
        ['GET', '/v1/describe', { secret: 'srmps_some_other_secret_000000000000' }],
        ['GET', '/v1/describe', { when: stale }],
        ['GET', '/v1/transactions/ch_1001', { signPath: '/v1/transactions/ch_1002' }],
        ['GET', '/v1/describe', { signHost: 'evil.example.com' }],
      ]
      for (const [method, path, o] of cases) {
        const r = await rest(base(), method, path, o)
        assert.equal(r.status, 401, `${method} ${path}`)
        assert.equal(r.text, REJECTED)
        assert.equal(r.type, 'application/json')
      }
    })

    test('the signature binds the key: signed over K but sent K′, signed with an empty key field, or header removed → 401, nothing changes', async () => {
      const before = await refundCount('ch_9001')
      const k = newKey()
      const k2 = newKey()
      const body = refundBody('ch_9001', 100)
      const cases: Parameters<typeof rest>[3][] = [
        { body, key: k2, signKey: k },
        { body, key: k, signKey: '' },
        { body, signKey: k },
      ]
      for (const o of cases) {
        const r = await rest(base(), 'POST', '/v1/refunds', o)
        assert.equal(r.status, 401)
        assert.equal(r.text, REJECTED)
      }
      assert.equal(await refundCount('ch_9001'), before)
      assert.equal(await operationStatus(k), 'unknown')
      assert.equal(await operationStatus(k2), 'unknown')
      // The header is signed on every route, even where the rules ignore it.
      assert.equal((await rest(base(), 'GET', '/v1/describe', { key: k, signKey: '' })).status, 401)
      assertOk(await rest(base(), 'GET', '/v1/describe', { key: k }))
    })

    test('one key across bindings: a REST refund replays over MCP, and conflicts there with another request', async () => {
      const key = newKey()
      const first = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_9001', 321), key })
      assertOk(first)
      const before = await refundCount('ch_9001')
      for (const era of ['modern', 'legacy'] as const) {
        const c = await connect(p.url, era)
        try {
          const same = await c.callTool('sr_refund', { idempotency_key: key, request: refundBody('ch_9001', 321) })
          assert.equal(same.isError ?? false, false)
          assert.equal(same.content[0]?.text, first.text)
          const other = await c.callTool('sr_refund', { idempotency_key: key, request: refundBody('ch_9001', 322) })
          assert.equal((other.structuredContent?.error as { code?: string } | undefined)?.code, 'idempotency_conflict')
          const op = await c.callTool('sr_get_operation', { idempotency_key: key })
          assert.deepEqual(op.structuredContent?.result, first.json)
        } finally {
          await c.close()
        }
      }
      assert.equal(await refundCount('ch_9001'), before)
    })

    test('one key across bindings: an MCP refund replays over REST (same bytes), and conflicts there', async () => {
      const key = newKey()
      const first = await mcp.callTool('sr_refund', { idempotency_key: key, request: refundBody('ch_9001', 654) })
      assert.equal(first.structuredContent?.status, 'succeeded')
      const before = await refundCount('ch_9001')
      const same = await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_9001', 654), key })
      assertOk(same)
      assert.equal(same.text, first.content[0]?.text)
      assertEnvelope(
        await rest(base(), 'POST', '/v1/refunds', { body: refundBody('ch_9001', 655), key }),
        409,
        'idempotency_conflict',
      )
      // A refusal recorded over MCP replays over REST at its 422 status.
      const refusedKey = newKey()
      const refused = await mcp.callTool('sr_refund', {
        idempotency_key: refusedKey,
        request: refundBody('ch_1001', 9_999_999),
      })
      assert.equal(refused.isError, true)
      const replay = await rest(base(), 'POST', '/v1/refunds', {
        body: refundBody('ch_1001', 9_999_999),
        key: refusedKey,
      })
      assertEnvelope(replay, 422, 'amount_exceeds_refundable')
      assert.equal(replay.text, refused.content[0]?.text)
      assert.equal(await refundCount('ch_9001'), before)
    })
  })

  describe(`REST statuses from the billing system on ${backend.name}`, { skip: backend.skip }, () => {
    let demo: DemoBilling | undefined
    let p: TestProvider
    let release!: () => void
    let entered!: () => void
    let inside: Promise<void>
    let mode: 'gate' | 'throw' | 'normal' = 'normal'
    before(async () => {
      demo = await demoBilling((ledger) => ({
        refund: async (key: string, command: RefundCommand) => {
          if (mode === 'throw') throw new Error('connection reset by the processor')
          if (mode === 'gate') {
            entered()
            await new Promise<void>((r) => {
              release = r
            })
          }
          return ledger.refund(key, command)
        },
        getCustomer: async (ref: string) => {
          if (ref === 'cus_boom') throw new Error('billing database down')
          return ledger.getCustomer(ref)
        },
        // A broken port: an object the contract refuses, and a refusal code outside the contract. The types refuse
        // the object at compile time; the cast stands for an adapter that hides it (JSON from elsewhere, any).
        getTransaction: async (ref: string) =>
          ref === 'ch_broken'
            ? ({ transaction_ref: 'ch_broken', amount: 20.5 } as unknown as Transaction)
            : ledger.getTransaction(ref),
        assessRefund: async (command: RefundCommand) =>
          command.amount.amount_minor === 4242
            ? { status: 'refused' as const, code: 'Not-A-Code', message: 'no' }
            : ledger.assessRefund(command),
      }))
      p = await start({ billing: demo.billing })
    })
    after(async () => {
      await p?.stop()
      await demo?.dispose()
    })

    test('a key whose first call still runs is 409 in_progress (retryable); the first call then finishes', async () => {
      mode = 'gate'
      inside = new Promise<void>((r) => {
        entered = r
      })
      const key = newKey()
      const first = rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_9001', 100), key })
      await inside
      const second = await rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_9001', 100), key })
      assertEnvelope(second, 409, 'in_progress')
      assert.equal((second.json.error as { retryable: boolean }).retryable, true)
      mode = 'normal'
      release()
      const done = await first
      assertOk(done)
      const replay = await rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_9001', 100), key })
      assert.equal(replay.text, done.text)
    })

    test('a billing call that fails is 503 unavailable (retryable); a server fault is 500 internal_error', async () => {
      mode = 'throw'
      const key = newKey()
      const r = await rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_9001', 100), key })
      assertEnvelope(r, 503, 'unavailable')
      assert.equal((r.json.error as { retryable: boolean }).retryable, true)
      mode = 'normal'
      const retry = await rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_9001', 100), key })
      assertOk(retry)
      const boom = await rest(p.baseUrl, 'GET', '/v1/customers/cus_boom')
      assertEnvelope(boom, 500, 'internal_error')
      assert.equal((boom.json.error as { retryable: boolean }).retryable, true)
    })

    test('an answer the contract does not allow is withheld: 500 internal_error, never sent as is', async () => {
      const broken = await rest(p.baseUrl, 'GET', '/v1/transactions/ch_broken')
      assertEnvelope(broken, 500, 'internal_error')
      assert.equal(broken.text.includes('20.5'), false)
      const odd = await rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_9001', 4242, true) })
      assertEnvelope(odd, 500, 'internal_error')
    })
  })

  describe(`REST configuration on ${backend.name}`, { skip: backend.skip }, () => {
    test('routes of capabilities the provider does not declare are 404, whatever the method', async () => {
      const { billing, dispose } = await demoBilling(() => REFUNDS_ONLY)
      const p = await start({ billing })
      try {
        const cases: [string, string, unknown][] = [
          ['GET', '/v1/subscriptions/sub_1001', undefined],
          ['POST', '/v1/subscriptions/sub_1001/cancel', cancelBody(true, true)],
          ['GET', '/v1/subscriptions/sub_1001/cancel', undefined],
          ['POST', '/v1/payment-attempts/list', { updated_since: '2020-01-01T00:00:00Z' }],
          ['GET', '/v1/payment-attempts/list', undefined],
        ]
        for (const [method, path, body] of cases) {
          assertEnvelope(await rest(p.baseUrl, method, path, { body }), 404, 'not_found')
        }
        assertOk(await rest(p.baseUrl, 'GET', '/v1/transactions/ch_1001'))
      } finally {
        await p.stop()
        await dispose()
      }
    })

    test('a body that does not arrive in time is 408 with the envelope, before the signature is looked at', async () => {
      const p = await start({ bodyTimeoutMs: 200 })
      try {
        const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
          const req = request(new URL('/v1/refunds', p.baseUrl), { method: 'POST' }, (res) => {
            let body = ''
            res.on('data', (c: Buffer) => {
              body += c.toString()
            })
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text: body }))
          })
          req.on('error', reject)
          req.setHeader('content-type', 'application/json')
          req.setHeader('content-length', '100')
          req.write('{"transaction_ref":')
        })
        assert.equal(status, 408)
        assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, 'invalid_request')
      } finally {
        await p.stop()
      }
    })

    test('behind a proxy: the public host and the stripped prefix are what the signature covers', async () => {
      const p = await start({ publicHost: 'billing.example.com', stripPrefix: '/chargeless' })
      try {
        const ok = await rest(p.baseUrl, 'GET', '/v1/transactions/ch_1001', {
          signHost: 'billing.example.com',
          signPath: '/chargeless/v1/transactions/ch_1001',
        })
        assertOk(ok, 'transaction.json')
        const key = newKey()
        const refund = await rest(p.baseUrl, 'POST', '/v1/refunds', {
          body: refundBody('ch_9001', 100),
          key,
          signHost: 'billing.example.com',
          signPath: '/chargeless/v1/refunds',
        })
        assertOk(refund)
        assert.equal((await rest(p.baseUrl, 'GET', '/v1/transactions/ch_1001')).status, 401)
        assert.equal(
          (await rest(p.baseUrl, 'GET', '/v1/transactions/ch_1001', { signHost: 'billing.example.com' })).status,
          401,
        )
      } finally {
        await p.stop()
      }
    })

    test('bearer token and edge headers are required on every request, then the signature', async () => {
      const p = await start({ bearerToken: 'tok_rest_123', edgeHeaders: { 'X-Edge-Secret': 'edge-789' } })
      try {
        const both = { authorization: 'Bearer tok_rest_123', 'x-edge-secret': 'edge-789' }
        assertOk(await rest(p.baseUrl, 'GET', '/v1/describe', { headers: both }))
        for (const headers of [
          {} as Record<string, string>,
          { authorization: 'Bearer tok_rest_123' },
          { 'x-edge-secret': 'edge-789' },
          { ...both, authorization: 'Bearer nope' },
        ]) {
          const r = await rest(p.baseUrl, 'GET', '/v1/describe', { headers })
          assert.equal(r.status, 401)
          assert.equal(r.text, REJECTED)
        }
        assert.equal((await rest(p.baseUrl, 'GET', '/v1/describe', { headers: both, unsigned: true })).status, 401)
      } finally {
        await p.stop()
      }
    })

    test('two production secrets are both accepted while rotating; a sandbox-signed request is refused', async () => {
      const oldSecret = 'srmp_old_0123456789abcdef0123456789ab'
      const newSecret = 'srmp_new_fedcba9876543210fedcba987654'
      // Production needs a billing port of its own (the demo ledger runs in the sandbox only).
      const demo = await demoBilling()
      const p = await start({ secrets: [oldSecret, newSecret], billing: demo.billing })
      try {
        assertOk(await rest(p.baseUrl, 'GET', '/v1/describe', { secret: oldSecret }))
        assertOk(await rest(p.baseUrl, 'GET', '/v1/describe', { secret: newSecret }))
        assert.equal((await rest(p.baseUrl, 'GET', '/v1/describe', { secret: SECRET })).status, 401)
      } finally {
        await p.stop()
        await demo.dispose()
      }
      await assert.rejects(start({ secrets: [oldSecret, SECRET] }), { code: 'ERR_SIGNING_SECRET_FORMAT' })
    })

    test('correlation headers are logged like _meta; no secret, signature, key or amount in any line', async () => {
      const lines: string[] = []
      const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) })
      const p = await start({ logger })
      try {
        const key = newKey()
        const headers = {
          'x-supportroute-request-id': 'req-rest-1',
          'x-supportroute-correlation-id': '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6',
          'x-supportroute-channel': 'ticket',
          'x-supportroute-external-ticket': 'ZD-4417',
        }
        assertOk(await rest(p.baseUrl, 'POST', '/v1/refunds', { body: refundBody('ch_9001', 4321), key, headers }))
        assert.equal((await rest(p.baseUrl, 'GET', '/v1/describe', { secret: 'srmps_wrong_000000000000' })).status, 401)
        assert.equal((await rest(p.baseUrl, 'GET', '/v1/nope')).status, 404)
        const call = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.tool === 'sr_refund')
        assert.equal(call?.request_id, 'req-rest-1')
        assert.equal(call?.correlation_id, '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6')
        assert.equal(call?.channel, 'ticket')
        assert.equal(call?.external_ticket, 'ZD-4417')
        assert.equal(call?.era, 'rest')
        assert.equal(call?.outcome, 'succeeded')
        const all = lines.join('\n')
        assert.equal(
          lines.some((l) => l.includes('request rejected: credentials')),
          true,
        )
        for (const secretish of [SECRET, 'v1=', key, '4321', 'ch_9001']) assert.equal(all.includes(secretish), false)
      } finally {
        await p.stop()
      }
    })
  })
}
