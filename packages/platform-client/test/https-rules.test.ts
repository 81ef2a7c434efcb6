// Issue 29 §2: over https the client keeps the platform's network rules exactly as over http — a redirect is
// refused and never followed, a private address is refused before any byte is sent — and checks the certificate
// (a private CA is trusted only when given as `ca`). Real https servers (createLimitedServer with a pair from a
// test CA) count the connections and requests they receive.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { createLimitedServer, type TlsCredentials } from '@tollgate/mcp-endpoint'
import { makeTestCertificateAuthority, type TestCertificateAuthority } from '@tollgate/test-support'
import { PlatformClient, type PlatformClientOptions } from '../src/index.js'
import { TRANSACTION_JSON } from './support/responder.js'

const SECRET = 'srmps_https_rules_test_0123456789'
const CONTEXT = { correlationId: '0199e2c4-5b6a-7c8d-9e0f-a1b2c3d4e5f6', channel: 'ticket' }

let ca: TestCertificateAuthority
let pair: TlsCredentials
const servers: Server[] = []
before(() => {
  ca = makeTestCertificateAuthority()
  const leaf = ca.issue({ dnsNames: ['localhost'], ips: ['127.0.0.1', '::1'] })
  pair = { cert: leaf.cert, key: leaf.key }
})
after(async () => {
  for (const s of servers) {
    s.closeAllConnections()
    await new Promise<void>((resolve) => s.close(() => resolve()))
  }
  ca.dispose()
})

interface HttpsServer {
  origin: string
  /** TCP connections accepted and requests answered, counted by the server. */
  connections: number
  requests: number
}

async function https(
  answer: (path: string) => { status: number; headers?: Record<string, string>; body?: string },
  bind: { host: string; port: number } = { host: '127.0.0.1', port: 0 },
  credentials: TlsCredentials = pair,
): Promise<HttpsServer> {
  const counts = { connections: 0, requests: 0 }
  const server = createLimitedServer(
    (req, res) => {
      counts.requests += 1
      const a = answer(req.url ?? '/')
      req.resume()
      res.writeHead(a.status, { 'content-type': 'application/json', ...a.headers }).end(a.body ?? '')
    },
    {},
    credentials,
  )
  server.on('connection', () => {
    counts.connections += 1
  })
  server.listen(bind.port, bind.host)
  await once(server, 'listening')
  servers.push(server)
  const { port } = server.address() as AddressInfo
  const origin = port === 443 ? `https://${bind.host}` : `https://${bind.host}:${port}`
  return Object.assign(counts, { origin }) as HttpsServer & typeof counts
}

function client(baseUrl: string, extra: Partial<PlatformClientOptions> = {}): PlatformClient {
  return new PlatformClient({
    baseUrl,
    secret: SECRET,
    transport: 'rest',
    allowPrivate: true,
    ca: ca.caCert,
    retryDelayMs: 1,
    ...extra,
  })
}

const read = (c: PlatformClient) => c.callTool('sr_get_transaction', { transaction_ref: 'ch_1001' }, CONTEXT)

test('https with the private CA given as ca: the call is answered; without it the certificate is refused', async () => {
  const s = await https(() => ({ status: 200, body: TRANSACTION_JSON }))
  const out = await read(client(s.origin))
  assert.equal(out.kind, 'result')
  assert.equal(s.requests, 1)
  // Node's bundled CAs do not know the test CA: the handshake fails, no request is made (retried as a network
  // failure like any other, then given up).
  const untrusting = new PlatformClient({
    baseUrl: s.origin,
    secret: SECRET,
    transport: 'rest',
    allowPrivate: true,
    maxAttempts: 1,
  })
  await assert.rejects(read(untrusting), { code: 'ERR_PLATFORM_NETWORK' })
  assert.equal(s.requests, 1)
})

for (const transport of ['rest', 'mcp'] as const) {
  test(`https over ${transport}: every redirect status is refused and never followed`, async () => {
    const target = await https(() => ({ status: 200, body: TRANSACTION_JSON }))
    for (const status of [301, 302, 303, 307, 308]) {
      const s = await https(() => ({ status, headers: { location: `${target.origin}/mcp` } }))
      const c = client(`${s.origin}${transport === 'mcp' ? '/mcp' : ''}`, { transport, eraCache: new Map() })
      await assert.rejects(read(c), { code: 'ERR_PLATFORM_REDIRECT', status })
      assert.equal(s.requests, 1, `${status}: one request, not retried`)
    }
    assert.equal(target.connections, 0, 'the redirect target was never contacted')
  })
}

test('https without allowPrivate: a loopback server is refused before any connection', async () => {
  const s = await https(() => ({ status: 200, body: TRANSACTION_JSON }))
  for (const transport of ['rest', 'mcp'] as const) {
    const c = client(`${s.origin}/mcp`, { transport, allowPrivate: false })
    await assert.rejects(read(c), { code: 'ERR_PLATFORM_BASE_URL' }) // a port other than 443 first
  }
  assert.equal(s.connections, 0)
})

test('https on 443 at a private address is refused as private (as over http), no connection made', async (t) => {
  // A loopback address of its own (127.x.y.z) so no other test's port 443 is disturbed; binding 443 needs root.
  const host = `127.${10 + Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`
  let s: HttpsServer
  try {
    const leaf = ca.issue({ ips: [host] })
    s = await https(() => ({ status: 200, body: TRANSACTION_JSON }), { host, port: 443 }, leaf)
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'EACCES' || code === 'EADDRINUSE' || code === 'EADDRNOTAVAIL') {
      t.skip(`cannot bind ${host}:443 here (${code})`)
      return
    }
    throw error
  }
  assert.equal(s.origin, `https://${host}`)
  for (const transport of ['rest', 'mcp'] as const) {
    const refused = client(`${s.origin}/mcp`, { transport, allowPrivate: false })
    await assert.rejects(read(refused), { code: 'ERR_PLATFORM_PRIVATE_ADDRESS' })
  }
  assert.equal(s.connections, 0)
  // The same server is reachable once private addresses are allowed: the refusal was the address rule alone.
  assert.equal((await read(client(s.origin))).kind, 'result')
  assert.equal(s.requests, 1)
})
