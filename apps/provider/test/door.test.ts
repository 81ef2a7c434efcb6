// The one door: bytes the strict reader refuses are answered by us and move no money, on both eras, with and
// without MCP headers; the modern fast path really answers behind the door; admission and limits hold.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { connect, signedSend, startTestProvider, type TestProvider } from './helpers.js'

const MODERN = '2026-07-28'
const LEGACY = '2025-11-25'
const CLAIM = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${MODERN}","io.modelcontextprotocol/clientCapabilities":{}}`

const send = signedSend

let seq = 0
const key = () => `0199a3c1-0a0b-7c0d-8e0f-101112131415:ticket:door-${process.pid}-${++seq}:refund`

/** A real (not dry-run) sr_refund of ch_1001 written by hand; `request` is the raw JSON of its request object. */
function refundCall(request: string, modern: boolean, extraMeta = ''): string {
  const meta = modern
    ? `,${CLAIM.slice(0, -1)}${extraMeta}}`
    : extraMeta === ''
      ? ''
      : `,"_meta":{${extraMeta.slice(1)}}`
  return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sr_refund","arguments":{"idempotency_key":"${key()}","request":${request}}${meta}}}`
}

const clean = (amount: string) =>
  `{"transaction_ref":"ch_1001","amount":{"amount_minor":${amount},"currency":"USD"},"reason":"service_issue","dry_run":false}`

// The five bodies (each would refund if a lenient parser let the last duplicate win), and deep nesting.
const HOSTILE: [string, string, string][] = [
  ['duplicate dry_run', clean('100').replace('"dry_run":false', '"dry_run":true,"dry_run":false'), ''],
  ['duplicated amount_minor', clean('100').replace('"amount_minor":100', '"amount_minor":1,"amount_minor":100'), ''],
  [
    'escaped-duplicated amount_minor',
    clean('100').replace('"amount_minor":100', '"amount_minor":1,"amount\\u005fminor":100'),
    '',
  ],
  ['amount 2000.0', clean('2000.0'), ''],
  ['amount 2e3', clean('2e3'), ''],
  ['nesting beyond the limit in _meta', clean('100'), `,"dev.supportroute/x":${'['.repeat(80)}${']'.repeat(80)}`],
]

type Mode = {
  name: string
  modern: boolean
  headers: (session: string | null) => Record<string, string>
  /** What the clean control call gets: a refund, or (2026-07-28 needs its headers) the SDK's own -32020. */
  control?: 'sdk-rejects'
}
const MODES: Mode[] = [
  {
    name: '2026-07-28 with MCP headers',
    modern: true,
    headers: () => ({ 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'sr_refund' }),
  },
  { name: '2026-07-28 without MCP headers', modern: true, headers: () => ({}), control: 'sdk-rejects' },
  {
    name: '2025-era session with MCP headers',
    modern: false,
    headers: (s) => ({ 'mcp-session-id': s ?? '', 'mcp-protocol-version': LEGACY }),
  },
  { name: '2025-era session without MCP headers', modern: false, headers: (s) => ({ 'mcp-session-id': s ?? '' }) },
]

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 't', version: '1' } },
})

describe('hostile bodies are refused at the door and change nothing', () => {
  let p: TestProvider
  before(async () => {
    p = await startTestProvider()
  })
  after(async () => p.stop())

  const refunds = async () => JSON.stringify((await p.billing.getTransaction('ch_1001'))?.refunds ?? [])

  for (const mode of MODES) {
    test(mode.name, async () => {
      const session = mode.modern ? null : (await send(p.url, 'POST', INIT)).session
      if (!mode.modern) assert.ok(session)
      const before = await refunds()
      for (const [what, request, extraMeta] of HOSTILE) {
        const res = await send(p.url, 'POST', refundCall(request, mode.modern, extraMeta), mode.headers(session))
        assert.equal(res.status, 400, `${what}: ${res.text}`)
        assert.deepEqual(
          JSON.parse(res.text),
          { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null },
          what,
        )
        assert.equal(await refunds(), before, `${what} changed the ledger`)
      }
      // Control: the same call written cleanly passes the door in this very mode, so the refusals above are the
      // door's: it refunds, or (no MCP headers on 2026-07-28) reaches the SDK, which answers its own -32020.
      const ok = await send(p.url, 'POST', refundCall(clean('100'), mode.modern), mode.headers(session))
      if (mode.control === 'sdk-rejects') {
        assert.equal(ok.status, 400)
        assert.equal(JSON.parse(ok.text).error.code, -32020)
        return
      }
      assert.equal(ok.status, 200, ok.text)
      assert.match(ok.text, /"status":"succeeded"/)
      assert.notEqual(await refunds(), before)
    })
  }
})

describe('the modern fast path answers behind the door', () => {
  test('official 2026-07-28 calls are answered by the fast path (not the SDK fallback), SDK-identically', async () => {
    // One clock for both: the demo data is dated relative to now to the second, so two servers started across a
    // second boundary would otherwise differ in their answers' dates.
    const now = () => 1_790_000_000_000
    const fast = await startTestProvider({ now })
    const slow = await startTestProvider({ modernFastPath: false, now })
    try {
      const answers: unknown[] = []
      for (const p of [fast, slow]) {
        const c = await connect(p.url, 'modern')
        const before = p.diagnostics.fastPathAnswered
        const r = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
        const list = await c.listTools()
        answers.push(r.structuredContent, list.length)
        await c.close()
        // tools/call is the fast path's; tools/list is always the SDK's.
        assert.equal(p.diagnostics.fastPathAnswered - before, p === fast ? 1 : 0)
      }
      assert.deepEqual(answers.slice(0, 2), answers.slice(2))
    } finally {
      await fast.stop()
      await slow.stop()
    }
  })
})

describe('the 2025-era fast path answers on a verified session', () => {
  test('the same bytes as the SDK for served, refused and invalid calls; counted only when on', async () => {
    // One clock for both, so the demo data (dated relative to now) is the same.
    const now = () => 1_790_000_000_000
    const fast = await startTestProvider({ now })
    const slow = await startTestProvider({ modernFastPath: false, now })
    try {
      const texts: string[][] = []
      for (const p of [fast, slow]) {
        const init = await send(p.url, 'POST', INIT)
        const h = { 'mcp-session-id': init.session as string, 'mcp-protocol-version': LEGACY }
        const before = p.diagnostics.legacyFastPathAnswered
        const out: string[] = []
        for (const args of ['{"transaction_ref":"ch_1001"}', '{"transaction_ref":"nope"}', '{"bad":1}']) {
          const r = await send(
            p.url,
            'POST',
            `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"sr_get_transaction","arguments":${args}}}`,
            h,
          )
          out.push(`${r.status} ${r.type} ${r.session === init.session} ${r.text}`)
        }
        texts.push(out)
        assert.equal(p.diagnostics.legacyFastPathAnswered - before, p === fast ? 3 : 0)
      }
      assert.deepEqual(texts[0], texts[1])
    } finally {
      await fast.stop()
      await slow.stop()
    }
  })
})

describe('admission and limits at the door', () => {
  let p: TestProvider
  before(async () => {
    p = await startTestProvider({ maxBodyBytes: 4096, bearerToken: 'door-test-token-0123456789' })
  })
  after(async () => p.stop())

  test('a missing bearer token is refused before the body is read (401, connection closed)', async () => {
    const res = await send(p.url, 'POST', INIT)
    assert.equal(res.status, 401)
    assert.match(res.text, /credentials_rejected/)
  })

  test('a body over the limit is 413 with the provider envelope', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(5000) } })
    const res = await send(p.url, 'POST', big, { authorization: 'Bearer door-test-token-0123456789' })
    assert.equal(res.status, 413)
    assert.equal(JSON.parse(res.text).error.code, 'invalid_request')
  })

  test('a foreign Host is 421 and a foreign Origin 403; an unsigned request to any other path is 401 (REST: signature before routing)', async () => {
    const u = new URL(p.url)
    const raw = async (headers: Record<string, string>, path = u.pathname) => {
      const { request } = await import('node:http')
      return new Promise<number>((resolve, reject) => {
        const r = request({ host: u.hostname, port: u.port, path, method: 'GET', headers }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        r.on('error', reject)
        r.end()
      })
    }
    assert.equal(await raw({ host: 'evil.example' }), 421)
    assert.equal(await raw({ host: u.host, origin: 'http://evil.example' }), 403)
    // Every non-/mcp path belongs to the REST binding, which checks the signature before routing (rest.test.ts:
    // a signed request to an unknown route is 404).
    assert.equal(await raw({ host: u.host }, '/elsewhere'), 401)
  })
})
