// A failing check's exchanges: what was sent and what came back, shortened, and scrubbed of every secret the kit
// holds even when a hostile provider echoes them back. Real HTTP against a server that echoes request headers.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { test } from 'node:test'
import { EXCERPT_MAX_CHARS, runKit } from '../src/index.js'
import { FIXTURES, SECRET } from './support/kit-harness.js'

const TOKEN = 'tok_echoed_bearer_0123456789'
const EDGE_VALUE = 'edge_echoed_value_0123456789'

test('a failing check records the call and the answer, shortened, with echoed secrets redacted', async () => {
  const server = createServer((req, res) => {
    // Echo every header back (the bearer token and the edge header value among them), plus a long tail.
    const body = JSON.stringify({ echoed: req.headers, secret: SECRET, tail: 'x'.repeat(5000) })
    res.writeHead(500, { 'content-type': 'application/json' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const run = await runKit({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      secret: SECRET,
      allowPrivate: true,
      fixtures: FIXTURES,
      bearerToken: TOKEN,
      edgeHeaders: { 'X-Edge-Key': EDGE_VALUE },
      recordExchanges: true,
    })
    const discovery = run.results[0]
    assert.equal(discovery?.verdict, 'fail')
    const exchanges = discovery?.exchanges ?? []
    assert.ok(exchanges.length >= 1, JSON.stringify(discovery))
    const first = exchanges[0] as { sent: string; received: string }
    assert.match(first.sent, /^handshake: server\/discover/)
    assert.match(first.received, /HTTP 500/)
    const all = JSON.stringify(exchanges)
    for (const secret of [TOKEN, EDGE_VALUE, SECRET]) assert.ok(!all.includes(secret), 'no secret in an excerpt')
    assert.match(all, /\[redacted\]/)
    assert.match(first.received, /… \(\d+ more characters\)$/)
    assert.ok(first.received.length < EXCERPT_MAX_CHARS + 40)
    // Passing and skipped checks carry none; without recordExchanges nothing is recorded.
    assert.ok(run.results.slice(1).every((r) => r.exchanges === undefined))
    const plain = await runKit({
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
      secret: SECRET,
      allowPrivate: true,
      fixtures: FIXTURES,
    })
    assert.equal(plain.results[0]?.exchanges, undefined)
  } finally {
    server.close()
  }
})

test('over REST a failing check records the REST call and the answer, with echoed secrets redacted', async () => {
  const server = createServer((req, res) => {
    const body = JSON.stringify({ echoed: req.headers, secret: SECRET })
    res.writeHead(500, { 'content-type': 'application/json' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const run = await runKit({
      transport: 'rest',
      baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      secret: SECRET,
      allowPrivate: true,
      fixtures: FIXTURES,
      bearerToken: TOKEN,
      edgeHeaders: { 'X-Edge-Key': EDGE_VALUE },
      recordExchanges: true,
    })
    assert.equal(run.transport, 'rest')
    const discovery = run.results[0]
    assert.equal(discovery?.verdict, 'fail')
    const first = (discovery?.exchanges ?? [])[0] as { sent: string; received: string }
    assert.match(first.sent, /^REST call of sr_describe \{\}/)
    assert.match(first.received, /HTTP 500/)
    const all = JSON.stringify(discovery?.exchanges)
    for (const secret of [TOKEN, EDGE_VALUE, SECRET]) assert.ok(!all.includes(secret), 'no secret in an excerpt')
  } finally {
    server.close()
  }
})
