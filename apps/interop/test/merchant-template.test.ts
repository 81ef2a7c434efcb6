// The worked example as an operator deploys it (issue 29 §2, §5): two replicas of examples/merchant-billing's server
// (configured by the environment only) on one PostgreSQL schema, behind Debian's HAProxy running the repository's
// examples/merchant-billing/deploy/haproxy.cfg itself (only its environment variables set: addresses, port, the
// certificate) — TLS on 443 when this process may bind it, else on a free port — with the provider under /billing
// on the public host. providercheck runs over https through https://localhost:<port>/billing for both bindings and
// the official MCP clients list the tools, trusting a test CA; a foreign host or path is refused, never redirected.
// Then one replica serving TLS itself: SIGHUP swaps its certificate and rotates its secrets file, SIGTERM drains.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { signHeaders } from '@tollgate/signing'
import { makeTestCertificateAuthority, probePostgres, type TestCertificateAuthority } from '@tollgate/test-support'
import pg from 'pg'
import { freePort, HAPROXY_INSTALL_HINT, haproxyVersion } from './support/haproxy.js'
import {
  canBind443,
  EXAMPLE_HAPROXY_CONFIG,
  type ExampleServer,
  httpsRequest,
  listToolsOverHttps,
  runProvidercheckCli,
  startExampleServer,
} from './support/merchant-template.js'

const REQUIRED = process.env.TOLLGATE_REQUIRE_SERVICES === '1'
const SECRET = `srmps_${randomUUID().replaceAll('-', '')}`
const TENANT = randomUUID()
const TOOLS = [
  'sr_cancel_subscription',
  'sr_describe',
  'sr_find_customers',
  'sr_get_customer',
  'sr_get_operation',
  'sr_get_subscription',
  'sr_get_transaction',
  'sr_list_transactions',
  'sr_refund',
]

const postgres = await probePostgres()
const missing = [
  haproxyVersion() === undefined ? `haproxy is not installed (${HAPROXY_INSTALL_HINT})` : undefined,
  spawnSync('openssl', ['version']).status === 0 ? undefined : 'openssl is not installed (the test CA needs it)',
  postgres.skip,
].filter((m) => m !== undefined)
if (missing.length > 0 && REQUIRED) throw new Error(`${missing.join('; ')}, and TOLLGATE_REQUIRE_SERVICES=1`)
const SKIP = missing.length > 0 ? missing.join('; ') : undefined

const kitArgs = (transport: 'mcp' | 'rest', baseUrl: string, subscription: string) => [
  '-sandbox',
  '-transport',
  transport,
  '-allow-private',
  '-base-url',
  baseUrl,
  '-tenant',
  TENANT,
  '-customer',
  'ACC-1001',
  '-transaction',
  'PAY-77002',
  '-subscription',
  subscription,
]

/** A fresh active plan for the next kit run (each run cancels its subscription). */
async function openPlan(schema: string, id: string): Promise<string> {
  const client = new pg.Client({ connectionString: postgres.url })
  await client.connect()
  try {
    const now = Math.floor(Date.now() / 1000)
    await client.query(
      `INSERT INTO ${schema}.plans VALUES ($1, 'ACC-1001', 'pro_monthly', 'active', 0, $2, 1, 0, $3, NULL)`,
      [id, now + 30 * 86_400, now],
    )
  } finally {
    await client.end()
  }
  return id
}

describe('the worked example behind the shipped HAProxy configuration, over https', { skip: SKIP }, () => {
  const scratch = mkdtempSync(join(tmpdir(), 'tollgate-template-'))
  const schema = `acme_tpl_${process.pid}_${Date.now().toString(36)}`
  const replicas: ExampleServer[] = []
  let ca: TestCertificateAuthority
  let haproxy: ChildProcess | undefined
  let haproxyErr = ''
  let port = 0
  let publicBase = ''

  before(async () => {
    ca = makeTestCertificateAuthority()
    const leaf = ca.issue({ dnsNames: ['localhost'], ips: ['127.0.0.1'] })
    const pem = join(scratch, 'billing.pem')
    writeFileSync(pem, `${leaf.cert}${leaf.key}`)
    const secrets = join(scratch, 'signing-secrets')
    writeFileSync(secrets, `${SECRET}\n`)
    port = (await canBind443()) ? 443 : await freePort()
    const publicHost = port === 443 ? 'localhost' : `localhost:${port}`
    publicBase = `https://${publicHost}/billing`
    const sessionKey = randomUUID() + randomUUID()
    // One after the other: the first creates the schemas and the demo rows, the second finds them.
    for (let i = 0; i < 2; i++) {
      replicas.push(
        await startExampleServer(
          {
            HOST: '127.0.0.1',
            PORT: '0',
            PUBLIC_HOST: publicHost,
            STRIP_PREFIX: '/billing',
            SIGNING_SECRET_FILE: secrets,
            DATABASE_URL: postgres.url,
            DATABASE_SCHEMA: schema,
            ACME_SEED_DEMO: '1',
            MCP_SESSION_KEY: sessionKey,
            ADMIN_PORT: '0',
            SHUTDOWN_DELAY_MS: '0',
          },
          scratch,
        ),
      )
    }
    const env = {
      PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/bin',
      BILLING_BIND: `127.0.0.1:${port}`,
      BILLING_TLS_PEM: pem,
      BILLING_PUBLIC_HOST: publicHost,
      BILLING_REPLICA_1: replicas[0]?.hostPort ?? '',
      BILLING_REPLICA_2: replicas[1]?.hostPort ?? '',
    }
    const check = spawnSync('haproxy', ['-c', '-f', EXAMPLE_HAPROXY_CONFIG], { env, encoding: 'utf8' })
    assert.equal(check.status, 0, `haproxy -c refused the shipped configuration: ${check.stdout}${check.stderr}`)
    haproxy = spawn('haproxy', ['-db', '-f', EXAMPLE_HAPROXY_CONFIG], { env, stdio: ['ignore', 'ignore', 'pipe'] })
    haproxy.stderr?.setEncoding('utf8').on('data', (c: string) => {
      haproxyErr += c
    })
    // Ready when /billing/readyz answers 200 through TLS (a bounded number of tries, each waiting for the last).
    for (let i = 0; ; i++) {
      if (haproxy.exitCode !== null) throw new Error(`haproxy exited: ${haproxyErr}`)
      const answer = await httpsRequest(port, ca.caCert, {
        path: '/billing/readyz',
        headers: { host: publicHost },
      }).catch(() => undefined)
      if (answer?.status === 200) break
      if (i === 200) throw new Error(`haproxy did not serve /billing/readyz: ${haproxyErr}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  })

  after(async () => {
    if (haproxy !== undefined && haproxy.exitCode === null) {
      const exited = new Promise((r) => haproxy?.once('exit', r))
      haproxy.kill('SIGTERM')
      await exited
    }
    for (const r of replicas) await r.stop()
    const client = new pg.Client({ connectionString: postgres.url })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.query(`DROP SCHEMA IF EXISTS ${schema}_keys CASCADE`)
    await client.end()
    ca?.dispose()
    rmSync(scratch, { recursive: true, force: true })
  })

  test('the balancer listens where it should (443 when this process may bind it)', (t) => {
    t.diagnostic(
      port === 443
        ? 'HAProxy bound 443 (root, and 443 was free)'
        : `HAProxy bound free port ${port}: this process cannot bind 443 (not root, or 443 is taken)`,
    )
    assert.ok(port > 0)
  })

  for (const transport of ['mcp', 'rest'] as const) {
    test(`providercheck -sandbox -transport ${transport} passes through ${'https://localhost:<port>/billing'}`, async () => {
      const subscription = await openPlan(schema, `PLN-${transport.toUpperCase()}-${Date.now()}`)
      const baseUrl = transport === 'mcp' ? `${publicBase}/mcp` : publicBase
      const r = await runProvidercheckCli(kitArgs(transport, baseUrl, subscription), SECRET, ca.caFile)
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`)
      assert.match(r.stdout, /\bpass\b/i)
    })
  }

  for (const era of ['v2', 'v1'] as const) {
    test(`the official MCP client (${era === 'v2' ? 'SDK v2, 2026-07-28' : 'SDK v1, 2025 sessions'}) lists the tools`, async () => {
      const { tools } = await listToolsOverHttps(era, `${publicBase}/mcp`, SECRET, ca.caFile)
      assert.deepEqual(tools, TOOLS)
    })
  }

  test('both replicas verified signed requests through the balancer (round-robin, the prefix and host signed)', async () => {
    for (const [i, replica] of replicas.entries()) {
      const metrics = await (await fetch(`${replica.adminUrl}/metrics`)).text()
      const verified = Number(/^tollgate_provider_signatures_verified_total\{secret="1"\} (\d+)/m.exec(metrics)?.[1])
      assert.ok(verified > 0, `replica ${i + 1} verified ${verified} requests`)
    }
  })

  test('a foreign host gets 421 and a path outside /billing 404 from HAProxy, never a redirect', async () => {
    const foreign = await httpsRequest(port, ca.caCert, { path: '/billing/readyz', headers: { host: 'evil.example' } })
    assert.equal(foreign.status, 421)
    const outside = await httpsRequest(port, ca.caCert, {
      path: '/mcp',
      headers: { host: new URL(publicBase).host },
    })
    assert.equal(outside.status, 404)
    const plain = await httpsRequest(port, ca.caCert, { path: '/billing', headers: { host: new URL(publicBase).host } })
    assert.ok(plain.status < 300 || plain.status >= 400, `a ${plain.status} is a redirect`)
  })
})

const NO_OPENSSL = spawnSync('openssl', ['version']).status === 0 ? undefined : 'openssl is not installed'
if (NO_OPENSSL !== undefined && REQUIRED) throw new Error(`${NO_OPENSSL}, and TOLLGATE_REQUIRE_SERVICES=1`)

describe('the worked example serving TLS itself: SIGHUP re-reads its files, SIGTERM drains', {
  skip: NO_OPENSSL,
}, () => {
  test('a new certificate and rotated secrets take effect on SIGHUP, bad files are refused and the old kept', async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'tollgate-template-tls-'))
    const ca = makeTestCertificateAuthority()
    const [OLD, NEW] = [SECRET, `srmps_${randomUUID().replaceAll('-', '')}`]
    const certFile = join(scratch, 'fullchain.pem')
    const keyFile = join(scratch, 'privkey.pem')
    const secretsFile = join(scratch, 'signing-secrets')
    const first = ca.issue()
    writeFileSync(certFile, first.cert)
    writeFileSync(keyFile, first.key)
    writeFileSync(secretsFile, `${OLD}\n`)
    const server = await startExampleServer(
      {
        PORT: '0',
        TLS_CERT_FILE: certFile,
        TLS_KEY_FILE: keyFile,
        SIGNING_SECRET_FILE: secretsFile,
        ACME_DATA_DIR: scratch,
        ACME_SEED_DEMO: '1',
        SHUTDOWN_DELAY_MS: '0',
      },
      scratch,
    )
    let reloads = 0
    const reload = async () => {
      server.child.kill('SIGHUP')
      await server.waitForLog(/"msg":"reload finished"/, ++reloads)
    }
    try {
      assert.match(server.url, /^https:\/\//)
      const port = Number(new URL(server.url).port)
      const host = `localhost:${port}`
      const describeWith = (secret: string) =>
        httpsRequest(port, ca.caCert, {
          path: '/v1/describe',
          headers: {
            host,
            ...signHeaders(secret, { method: 'GET', host, path: '/v1/describe', body: Buffer.alloc(0) }),
          },
        })
      const before = await describeWith(OLD)
      assert.equal(before.status, 200, before.body)
      assert.equal(before.fingerprint256, first.fingerprint256)

      const kit = await runProvidercheckCli(kitArgs('mcp', server.url, 'PLN-5001'), OLD, ca.caFile)
      assert.equal(kit.code, 0, `${kit.stdout}\n${kit.stderr}`)

      // A new pair: new handshakes see it.
      const second = ca.issue()
      writeFileSync(certFile, second.cert)
      writeFileSync(keyFile, second.key)
      await reload()
      assert.equal((await describeWith(OLD)).fingerprint256, second.fingerprint256)

      // A certificate that is not PEM: refused, logged naming the variable, the second pair still served.
      writeFileSync(certFile, 'not a certificate\n')
      await reload()
      assert.match(server.stderr(), /"variable":"TLS_CERT_FILE".*"msg":"TLS files not reloaded/)
      assert.equal((await describeWith(OLD)).fingerprint256, second.fingerprint256)
      writeFileSync(certFile, second.cert)

      // Rotation: old → old+new → new; each step verified on the next request.
      writeFileSync(secretsFile, `${OLD}\n${NEW}\n`)
      await reload()
      assert.equal((await describeWith(OLD)).status, 200)
      assert.equal((await describeWith(NEW)).status, 200)
      writeFileSync(secretsFile, `${NEW}\n`)
      await reload()
      assert.equal((await describeWith(NEW)).status, 200)
      assert.equal((await describeWith(OLD)).status, 401)

      // A production secret in a sandbox server's file: refused, the new secret still verifies.
      writeFileSync(secretsFile, `srmp_${randomUUID().replaceAll('-', '')}\n`)
      await reload()
      assert.match(server.stderr(), /"variable":"SIGNING_SECRET_FILE".*"msg":"signing secrets not reloaded/)
      assert.equal((await describeWith(NEW)).status, 200)
      const reloadLine = server
        .stderr()
        .split('\n')
        .find((l) => l.includes('"reloaded":["tls","secrets"]'))
      t.diagnostic(`a reload of both files: ${reloadLine === undefined ? '?' : JSON.parse(reloadLine).ms} ms`)

      assert.equal(await server.stop(), 0)
      assert.match(server.stderr(), /"cut":0,"forced":false,"msg":"stopped"/)
      for (const secret of [OLD, NEW]) assert.ok(!server.stderr().includes(secret), 'a secret in the log')
    } finally {
      await server.kill()
      ca.dispose()
      rmSync(scratch, { recursive: true, force: true })
    }
  })
  test('SIGTERM drains with shutdown(): /readyz answers 503 at once while signed calls are still answered', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'tollgate-template-drain-'))
    const ca = makeTestCertificateAuthority()
    const leaf = ca.issue()
    writeFileSync(join(scratch, 'cert.pem'), leaf.cert)
    writeFileSync(join(scratch, 'key.pem'), leaf.key)
    // A delay far longer than the test: whatever the machine's speed, the checks below run inside it.
    const server = await startExampleServer(
      {
        PORT: '0',
        TLS_CERT_FILE: join(scratch, 'cert.pem'),
        TLS_KEY_FILE: join(scratch, 'key.pem'),
        SIGNING_SECRET: SECRET,
        ACME_DATA_DIR: scratch,
        ACME_SEED_DEMO: '1',
        SHUTDOWN_DELAY_MS: '600000',
      },
      scratch,
    )
    try {
      const port = Number(new URL(server.url).port)
      const host = `localhost:${port}`
      const describeCall = () =>
        httpsRequest(port, ca.caCert, {
          path: '/v1/describe',
          headers: {
            host,
            ...signHeaders(SECRET, { method: 'GET', host, path: '/v1/describe', body: Buffer.alloc(0) }),
          },
        })
      assert.equal((await httpsRequest(port, ca.caCert, { path: '/readyz', headers: { host } })).status, 200)
      server.child.kill('SIGTERM')
      await server.waitForLog(/"signal":"SIGTERM","delayMs":600000,"msg":"stopping/)
      assert.equal((await httpsRequest(port, ca.caCert, { path: '/readyz', headers: { host } })).status, 503)
      const during = await describeCall()
      assert.equal(during.status, 200, during.body)
    } finally {
      await server.kill()
      ca.dispose()
      rmSync(scratch, { recursive: true, force: true })
    }
  })
})
