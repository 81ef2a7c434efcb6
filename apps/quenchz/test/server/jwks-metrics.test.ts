// The issuer's key set's reachability on the admin port: quenchz --jwks-url as its own process, a JWKS server the test
// can make fail, and the fetches quenchz made counted by result, with the time of the last success.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { jwksResult } from '../../src/server/metrics.ts'
import { type CliProcess, startCliProcess } from './support/cli-process.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'
import { until } from './support/wait.ts'

const ISSUER = 'https://issuer.example.invalid'
const RESOURCE = 'https://quenchz.invalid/mcp'
const { scratch, empty } = scratchWithEmptyRecordings('quenchz-jwks-metrics-')
after(() => rmSync(scratch, { recursive: true, force: true }))

describe('the JWKS fetch metrics', () => {
  let server: Server
  let jwksUrl: string
  let status = 200
  let fetches = 0
  let sign: (kid?: string) => Promise<string>
  let quenchz: CliProcess
  before(async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256')
    const kid = randomUUID()
    const body = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] })
    server = createServer((_req, res) => {
      fetches++
      if (status !== 200) res.writeHead(status).end()
      else res.writeHead(200, { 'content-type': 'application/json' }).end(body)
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
    sign = (as = kid) =>
      new SignJWT({ scope: 'rates:read' })
        .setProtectedHeader({ alg: 'RS256', kid: as })
        .setIssuer(ISSUER)
        .setSubject('alice')
        .setAudience(RESOURCE)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(privateKey)
    // Cooldown 0: every unknown kid may make a fetch, so the test decides when quenchz asks.
    quenchz = await startCliProcess(
      [
        ...['--port', '0', '--jwks-url', jwksUrl, '--issuer', ISSUER, '--jwks-cooldown', '0'],
        ...['--source', 'recordings', '--recordings', empty, '--admin-port', '0'],
      ],
      scratch,
    )
  })
  after(async () => {
    await quenchz?.stop()
    server?.closeAllConnections()
    server?.close()
  })

  const metric = async (name: string): Promise<Map<string, number>> => {
    const text = await (await fetch(new URL('/metrics', quenchz.admin))).text()
    const found = new Map<string, number>()
    for (const line of text.split('\n')) {
      const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line)
      if (m) found.set(m[1] ?? '', Number(m[2]))
    }
    return found
  }
  const initialize = (token: string) =>
    fetch(quenchz.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    })

  test('every result exists at 0 before any fetch; the last success is 0', async () => {
    const counts = await metric('quenchz_jwks_fetches_total')
    for (const r of ['ok', '3xx', '4xx', '5xx', 'timeout', 'unreachable', 'too-large', 'invalid'])
      assert.equal(counts.get(`{result="${r}"}`), 0, r)
    assert.equal((await metric('quenchz_jwks_last_success_timestamp_seconds')).get(''), 0)
  })

  test('a successful fetch counts ok, sets the last success and the number of keys; a failing issuer counts 5xx', async () => {
    const before = Date.now() / 1000
    const res = await initialize(await sign())
    assert.equal(res.status, 200)
    await res.text()
    assert.equal((await metric('quenchz_jwks_fetches_total')).get('{result="ok"}'), 1)
    const last = (await metric('quenchz_jwks_last_success_timestamp_seconds')).get('') as number
    assert.ok(last >= Math.floor(before), `${last} >= ${before}`)
    assert.equal((await metric('quenchz_jwks_keys')).get(''), 1)
    // The issuer fails; a token naming a key quenchz does not hold makes it ask, and is answered 503 (not 401).
    status = 503
    const asked = fetches
    const failed = await initialize(await sign(randomUUID()))
    assert.equal(failed.status, 503)
    await failed.text()
    assert.equal(fetches, asked + 1)
    await until(
      'the failure is counted',
      async () => (await metric('quenchz_jwks_fetches_total')).get('{result="5xx"}') === 1,
    )
    assert.equal((await metric('quenchz_jwks_last_success_timestamp_seconds')).get(''), last, 'the last success stays')
    // Keys still held keep verifying meanwhile.
    const held = await initialize(await sign())
    assert.equal(held.status, 200)
    await held.text()
    status = 200
  })

  test('results are words of a fixed set, never text from the issuer', () => {
    assert.equal(jwksResult({ ok: true, keys: 2 }), 'ok')
    assert.equal(jwksResult({ ok: false, reason: 'http-404' }), '4xx')
    assert.equal(jwksResult({ ok: false, reason: 'http-302' }), '3xx')
    assert.equal(jwksResult({ ok: false, reason: 'timeout' }), 'timeout')
    assert.equal(jwksResult({ ok: false, reason: 'not-json' }), 'invalid')
    assert.equal(jwksResult({ ok: false, reason: 'http-999' }), 'invalid')
  })
})
