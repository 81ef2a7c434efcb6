// The provider serves HTTPS itself (issue 29 §2): the official MCP client and a signed REST call over https with a
// private CA; a certificate swapped with setTls under load fails no request and new handshakes get it; a bad pair is
// refused with one log line naming no byte, the old pair kept; the admin port stays plain HTTP.
import assert from 'node:assert/strict'
import { Agent, request } from 'node:https'
import { after, before, describe, test } from 'node:test'
import type { TLSSocket } from 'node:tls'
import { signHeaders } from '@tollgate/signing'
import { httpsFetch, makeTestCertificateAuthority, type TestCertificateAuthority } from '@tollgate/test-support'
import { pino } from 'pino'
import { TlsCredentialsError } from '../src/index.js'
import { connect, SECRET, startTestProvider } from './helpers.js'
import { freshFingerprint, httpsGet, startCallers } from './https-rest.js'
import { refundBody } from './rest-helpers.js'

let ca: TestCertificateAuthority
before(() => {
  ca = makeTestCertificateAuthority()
})
after(() => ca.dispose())

describe('startProvider with tls', () => {
  test('the official MCP clients (both eras) and a signed REST call work over https; the admin port stays http', async () => {
    const leaf = ca.issue()
    const p = await startTestProvider({ tls: { cert: leaf.cert, key: leaf.key }, adminPort: 0 })
    const https = httpsFetch(ca.caCert)
    try {
      assert.match(p.url, /^https:\/\/127\.0\.0\.1:\d+\/mcp$/)
      assert.match(p.baseUrl, /^https:\/\//)
      assert.match(p.restUrl, /^https:\/\/.*\/v1\/$/)
      for (const era of ['modern', 'legacy'] as const) {
        const c = await connect(p.url, era, { fetch: https.fetch })
        try {
          const r = await c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' })
          assert.equal(r.isError ?? false, false)
          assert.equal((r.structuredContent as { transaction_ref?: string }).transaction_ref, 'ch_1001')
        } finally {
          await c.close()
        }
      }
      assert.deepEqual([...new Set(https.certificates)], [leaf.fingerprint256])
      const r = await httpsGet(p.baseUrl, '/v1/transactions/ch_1001', {
        secret: SECRET,
        ca: ca.caCert,
        agent: https.agent,
      })
      assert.equal(r.status, 200, r.text)
      assert.equal(r.fingerprint, leaf.fingerprint256)
      // Plain HTTP on the https port gets no answer from the endpoint.
      await assert.rejects(fetch(p.url.replace('https:', 'http:')))
      assert.match(p.adminUrl ?? '', /^http:\/\//)
      const metrics = await fetch(`${p.adminUrl}/metrics`)
      assert.equal(metrics.status, 200)
      assert.match(await metrics.text(), /tollgate_provider_signatures_verified_total\{secret="1"\} [1-9]/)
    } finally {
      https.close()
      await p.stop()
    }
  })

  test('setTls under load: no request fails, new handshakes see the new certificate, a bad pair keeps the old', async (t) => {
    const [first, second, third] = [ca.issue(), ca.issue(), ca.issue()]
    const lines: Record<string, unknown>[] = []
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) })
    const p = await startTestProvider({ tls: { cert: first.cert, key: first.key }, logger })
    const callers = startCallers(4, [p.baseUrl], '/v1/transactions/ch_9001', { ca: ca.caCert, secret: () => SECRET })
    try {
      await callers.more(10)
      const started = performance.now()
      p.setTls({ cert: second.cert, key: second.key })
      const tookMs = performance.now() - started
      assert.equal(await freshFingerprint(p.baseUrl, { secret: SECRET, ca: ca.caCert }), second.fingerprint256)
      await callers.more(10)
      // A pair whose key is not the certificate's: refused by code, one log line without a byte of either.
      const before = lines.length
      assert.throws(
        () => p.setTls({ cert: third.cert, key: second.key }),
        (e: unknown) => e instanceof TlsCredentialsError && e.code === 'ERR_MCP_ENDPOINT_TLS' && e.which === 'pair',
      )
      const logged = lines.slice(before)
      assert.equal(logged.length, 1)
      assert.equal(logged[0]?.msg, 'TLS pair refused: the old one is kept')
      assert.doesNotMatch(JSON.stringify(logged), /BEGIN|PRIVATE/)
      assert.equal(await freshFingerprint(p.baseUrl, { secret: SECRET, ca: ca.caCert }), second.fingerprint256)
      await callers.more(10)
      await callers.stop()
      assert.deepEqual(callers.failures, [])
      // The kept-alive connections were opened before the swap: they kept the first certificate and were not cut.
      for (const seen of callers.fingerprints) assert.equal(seen[0], first.fingerprint256)
      t.diagnostic(
        `setTls took ${tookMs.toFixed(2)} ms; ${callers.counts.reduce((a, b) => a + b)} requests, none failed`,
      )
    } finally {
      await callers.stop()
      await p.stop()
    }
  })

  test('a request whose body is still arriving when setTls runs is answered on its connection, not cut', async () => {
    const [first, second] = [ca.issue(), ca.issue()]
    const p = await startTestProvider({ tls: { cert: first.cert, key: first.key } })
    const agent = new Agent({ keepAlive: false })
    try {
      const url = new URL('/v1/refunds', p.baseUrl)
      const body = Buffer.from(JSON.stringify(refundBody('ch_9001', 100, true)))
      const signed = signHeaders(SECRET, { method: 'POST', host: url.host, path: url.pathname, body })
      const answered = new Promise<{ status: number; fingerprint: string }>((resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            agent,
            ca: ca.caCert,
            servername: 'localhost',
            headers: {
              ...signed,
              'content-type': 'application/json',
              'content-length': String(body.length),
              expect: '100-continue',
            },
          },
          (res) => {
            const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256
            res.resume()
            res.on('end', () => resolve({ status: res.statusCode ?? 0, fingerprint }))
          },
        )
        req.on('error', reject)
        // 100 Continue: the server has read the headers, so the request is in flight; then half the body, the swap,
        // and the rest.
        req.on('continue', () => {
          req.write(body.subarray(0, 10))
          setImmediate(() => {
            p.setTls({ cert: second.cert, key: second.key })
            setImmediate(() => req.end(body.subarray(10)))
          })
        })
      })
      const r = await answered
      assert.deepEqual(r, { status: 200, fingerprint: first.fingerprint256 })
      assert.equal(await freshFingerprint(p.baseUrl, { secret: SECRET, ca: ca.caCert }), second.fingerprint256)
    } finally {
      agent.destroy()
      await p.stop()
    }
  })

  test('a bad pair at start throws before listening; setTls on a plain server is refused', async () => {
    const [a, b] = [ca.issue(), ca.issue()]
    await assert.rejects(startTestProvider({ tls: { cert: a.cert, key: b.key } }), TlsCredentialsError)
    const plain = await startTestProvider()
    try {
      assert.match(plain.url, /^http:\/\//)
      assert.throws(() => plain.setTls({ cert: a.cert, key: a.key }), TlsCredentialsError)
    } finally {
      await plain.stop()
    }
  })
})
