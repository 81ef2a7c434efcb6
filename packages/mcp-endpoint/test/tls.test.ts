// TLS served by createLimitedServer: real HTTPS on 127.0.0.1 with a private CA, a pair swapped while connections
// are open (they keep theirs, new handshakes see the new certificate), and bad pairs refused with the old one kept.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import type { Server } from 'node:http'
import { Agent, request } from 'node:https'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { connect, type TLSSocket } from 'node:tls'
import { makeTestCertificateAuthority, type TestCertificateAuthority } from '@tollgate/test-support'
import { createLimitedServer, readTlsFiles, replaceTlsCredentials, TlsCredentialsError } from '../src/index.js'

let ca: TestCertificateAuthority
before(() => {
  ca = makeTestCertificateAuthority()
})
after(() => ca.dispose())

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return (server.address() as AddressInfo).port
}

function get(port: number, agent: Agent): Promise<{ status: number; body: string; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/', agent, ca: ca.caCert, servername: 'localhost' },
      (res) => {
        // Read while the socket is attached: a kept-alive socket is handed back to the agent at the end.
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c) => {
          body += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint }))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

describe('createLimitedServer with tls', () => {
  test('serves HTTPS with the given pair; a swapped pair reaches new handshakes and open connections keep theirs', async () => {
    const first = ca.issue()
    const second = ca.issue()
    const server = createLimitedServer((_req, res) => res.end('ok'), {}, await readTlsFiles(first))
    const port = await listen(server)
    try {
      const kept = new Agent({ keepAlive: true, maxSockets: 1 })
      const a = await get(port, kept)
      assert.deepEqual([a.status, a.body, a.fingerprint], [200, 'ok', first.fingerprint256])
      replaceTlsCredentials(server, { cert: second.cert, key: second.key })
      // The kept-alive connection was made before the swap: same connection, same certificate, still answered.
      const b = await get(port, kept)
      assert.deepEqual([b.status, b.fingerprint], [200, first.fingerprint256])
      const fresh = new Agent({ keepAlive: false })
      const c = await get(port, fresh)
      assert.deepEqual([c.status, c.fingerprint], [200, second.fingerprint256])
      kept.destroy()
      fresh.destroy()
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  test('a key that is not the certificate’s, or files that are not PEM, are refused by code and the old pair kept', async () => {
    const first = ca.issue()
    const other = ca.issue()
    const server = createLimitedServer((_req, res) => res.end('ok'), {}, { cert: first.cert, key: first.key })
    const port = await listen(server)
    try {
      assert.throws(
        () => replaceTlsCredentials(server, { cert: first.cert, key: other.key }),
        (e: unknown) => e instanceof TlsCredentialsError && e.code === 'ERR_MCP_ENDPOINT_TLS' && e.which === 'pair',
      )
      assert.throws(
        () => replaceTlsCredentials(server, { cert: 'not pem', key: first.key }),
        (e: unknown) => e instanceof TlsCredentialsError && e.which === 'cert' && !e.message.includes('not pem'),
      )
      await assert.rejects(
        readTlsFiles({ certFile: `${ca.dir}/missing.pem`, keyFile: first.keyFile }),
        (e: unknown) => e instanceof TlsCredentialsError && e.which === 'cert' && !e.message.includes(ca.dir),
      )
      const fresh = new Agent({ keepAlive: false })
      assert.equal((await get(port, fresh)).fingerprint, first.fingerprint256)
      fresh.destroy()
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  test('a plain server refuses a TLS swap, and a bad pair at creation throws before anything listens', () => {
    const plain = createLimitedServer((_req, res) => res.end('ok'))
    const leaf = ca.issue()
    assert.throws(() => replaceTlsCredentials(plain, leaf), TlsCredentialsError)
    assert.throws(
      () => createLimitedServer(() => {}, {}, { cert: leaf.cert, key: ca.issue().key }),
      TlsCredentialsError,
    )
  })

  test('the limits apply over TLS too: a client that sends no request is cut after headersTimeoutMs', async () => {
    const leaf = ca.issue()
    const server = createLimitedServer(
      (_req, res) => res.end('ok'),
      { headersTimeoutMs: 300, requestTimeoutMs: 300 },
      leaf,
    )
    const port = await listen(server)
    try {
      const socket = connect({ host: '127.0.0.1', port, ca: ca.caCert, servername: 'localhost' })
      await once(socket, 'secureConnect')
      socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n')
      let answer = ''
      socket.setEncoding('utf8')
      socket.on('data', (c) => {
        answer += c
      })
      await once(socket, 'close')
      assert.match(answer, /^HTTP\/1\.1 408/)
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})
