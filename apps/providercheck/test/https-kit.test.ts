// Issue 29 §2: the kit over https against the provider serving TLS itself (startProvider with `tls`, a certificate
// from a test CA), over both bindings — in process with the CA given as `ca`, and the CLI as a process trusting the
// CA through NODE_EXTRA_CA_CERTS, as a merchant would for a staging certificate. The live check runs over https too.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DemoLedger, demoLedgerStore, openSqliteStore, type RunningProvider, startProvider } from '@tollgate/provider'
import { makeTestCertificateAuthority, type TestCertificateAuthority } from '@tollgate/test-support'
import { CHECK_IDS, runKit } from '../src/index.js'
import { forwardingPort } from './support/forwarding-port.js'
import { FIXTURES, kitArgv, restKitArgv, SECRET, verdicts } from './support/kit-harness.js'

const LIVE_SECRET = 'srmp_providercheck_https_test_0123456789abcdef'
const app = fileURLToPath(new URL('..', import.meta.url))

let ca: TestCertificateAuthority
before(() => {
  ca = makeTestCertificateAuthority()
})
after(() => ca.dispose())

interface Served {
  provider: RunningProvider
  close(): Promise<void>
}

/** A fresh provider serving https itself with a leaf of the test CA (localhost, 127.0.0.1, ::1). */
async function httpsProvider(live = false): Promise<Served> {
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-https-'))
  const leaf = ca.issue()
  const ledgerStore = live ? openSqliteStore(join(dir, 'ledger.sqlite')) : undefined
  const billing = ledgerStore === undefined ? undefined : new DemoLedger(demoLedgerStore(ledgerStore))
  await billing?.seed()
  const provider = await startProvider({
    secrets: [live ? LIVE_SECRET : SECRET],
    store: { kind: 'sqlite', file: join(dir, 'provider.sqlite') },
    tls: { cert: leaf.cert, key: leaf.key },
    logger: false,
    // Live: the demo ledger's data behind a port of the test's own (a DemoLedger itself is refused in production).
    ...(billing !== undefined ? { billing: forwardingPort(billing) } : { demoLedger: {} }),
  })
  return {
    provider,
    async close() {
      await provider.close()
      await ledgerStore?.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

function allPass(transport: 'mcp' | 'rest'): Record<string, string> {
  const notHere = transport === 'mcp' ? 'signature_idempotency_key' : 'mcp_profile'
  return Object.fromEntries(CHECK_IDS.map((id) => [id, id === notHere ? 'skip not_applicable' : 'pass']))
}

for (const transport of ['mcp', 'rest'] as const) {
  test(`over https (${transport}), the kit passes the provider serving TLS itself; an untrusted CA is unreachable`, async () => {
    const served = await httpsProvider()
    try {
      const baseUrl = transport === 'mcp' ? served.provider.url : served.provider.baseUrl
      assert.match(baseUrl, /^https:\/\/127\.0\.0\.1:\d+/)
      const run = await runKit({
        transport,
        baseUrl,
        secret: SECRET,
        allowPrivate: true,
        fixtures: FIXTURES,
        ca: ca.caCert,
      })
      assert.deepEqual(verdicts(run.results), allPass(transport))
      // Without the CA the certificate is not trusted: discovery fails before any check could pass.
      const untrusted = await runKit({ transport, baseUrl, secret: SECRET, allowPrivate: true, fixtures: FIXTURES })
      assert.equal(verdicts(untrusted.results).discovery, 'fail unreachable')
      assert.equal(untrusted.passed, false)
    } finally {
      await served.close()
    }
  })
}

function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@tollgate/source', '--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: app,
      env: { ...process.env, ...env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => {
      stdout += c
    })
    child.stderr.on('data', (c) => {
      stderr += c
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

test('the CLI as a process passes both bindings over https, trusting the test CA through NODE_EXTRA_CA_CERTS', async () => {
  for (const transport of ['mcp', 'rest'] as const) {
    const served = await httpsProvider()
    try {
      const argv = transport === 'mcp' ? kitArgv(served.provider.url) : restKitArgv(served.provider.baseUrl)
      const r = await cli(argv, { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET, NODE_EXTRA_CA_CERTS: ca.caFile })
      assert.equal(r.code, 0, `${transport}:\n${r.stdout}${r.stderr}`)
      assert.match(r.stdout, /: PASS\n/)
      assert.match(r.stdout, new RegExp(`transport ${transport}, sandbox, https://127\\.0\\.0\\.1:`))
    } finally {
      await served.close()
    }
  }
})

test('-live over https against a production provider serving TLS itself passes and skips what changes data', async () => {
  const served = await httpsProvider(true)
  try {
    const r = await cli(
      [
        '-live',
        '-transport',
        'mcp',
        '-allow-private',
        '-base-url',
        served.provider.url,
        '-tenant',
        FIXTURES.tenant,
        '-transaction',
        FIXTURES.transaction,
      ],
      { PROVIDERCHECK_LIVE_SIGNING_SECRET: LIVE_SECRET, NODE_EXTRA_CA_CERTS: ca.caFile },
    )
    assert.equal(r.code, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /^refund +skip +not_applicable +changes data/m)
    assert.match(r.stdout, /^get_transaction +pass/m)
  } finally {
    await served.close()
  }
})
