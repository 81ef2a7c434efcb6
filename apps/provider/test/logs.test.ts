// Structured logs carry the platform's correlation ids from _meta, and never a secret, a signature or a body value.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { signHeaders } from '@tollgate/signing'
import { pino } from 'pino'
import { connect, type Era, newKey, SECRET, startTestProvider } from './helpers.js'

test('tool-call log lines carry request_id, correlation_id, channel and external_ticket; no secrets or values', async () => {
  const lines: string[] = []
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) })
  const p = await startTestProvider({ logger })
  const key = newKey()
  try {
    for (const era of ['modern', 'legacy', 'v1'] as Era[]) {
      const c = await connect(p.url, era)
      await c.callTool(
        'sr_refund',
        {
          idempotency_key: `${key}-${era}`,
          request: {
            transaction_ref: 'ch_9001',
            amount: { amount_minor: 4321, currency: 'USD' },
            reason: 'goodwill',
            dry_run: false,
          },
        },
        {
          'dev.supportroute/request_id': `req-${era}`,
          'dev.supportroute/correlation_id': '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6',
          'dev.supportroute/channel': 'ticket',
          'dev.supportroute/external_ticket': 'ZD-4417',
        },
      )
      await c.close()
    }
    // A rejected request: its signature must not reach the log either.
    const body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sr_describe","arguments":{}}}'
    const u = new URL(p.url)
    const sig = signHeaders('srmps_wrong_secret_00000000000000', {
      method: 'POST',
      host: u.host,
      path: u.pathname,
      body: Buffer.from(body),
      key: '',
    })
    const rejected = await fetch(p.url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', ...sig },
    })
    assert.equal(rejected.status, 401)
    await rejected.text()

    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    for (const era of ['modern', 'legacy', 'v1']) {
      const call = records.find((r) => r.msg === 'tool call' && r.request_id === `req-${era}`)
      assert.ok(call, `no tool-call line for ${era}`)
      assert.equal(call.tool, 'sr_refund')
      assert.equal(call.correlation_id, '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6')
      assert.equal(call.channel, 'ticket')
      assert.equal(call.external_ticket, 'ZD-4417')
      assert.equal(call.outcome, 'succeeded')
    }
    const rejection = records.find((r) => r.msg === 'request rejected: credentials')
    assert.equal(rejection?.reason, 'mismatch')
    const all = lines.join('\n')
    for (const secretish of [SECRET, sig['X-SupportRoute-Signature'] as string, key, 'ch_9001', body]) {
      assert.equal(all.includes(secretish), false, 'a log line holds a secret, a signature or a request value')
    }
    // No signature of any request (the accepted ones included), and no amount from a body.
    assert.doesNotMatch(all, /v1=[0-9a-f]{64}/)
    assert.equal(all.includes('4321'), false)
  } finally {
    await p.stop()
  }
})
