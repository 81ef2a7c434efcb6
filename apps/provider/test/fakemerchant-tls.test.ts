// fakemerchant serves HTTPS with --tls-cert/--tls-key (issue 29 §2): SIGHUP after the files changed serves the new
// certificate to new handshakes while kept-alive callers go on unharmed; a bad pair on SIGHUP keeps the old one (one
// stderr line); SIGHUP never stops the process; the two flags go together. As root, once on port 443.
import assert from 'node:assert/strict'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import {
  makeTestCertificateAuthority,
  type TestCertificate,
  type TestCertificateAuthority,
} from '@tollgate/test-support'
import { type FakemerchantProcess, runFakemerchant } from './fakemerchant-process.js'
import { SECRET } from './helpers.js'
import { freshFingerprint, startCallers } from './https-rest.js'

let ca: TestCertificateAuthority
let dir: string
before(() => {
  ca = makeTestCertificateAuthority()
  dir = mkdtempSync(join(tmpdir(), 'fakemerchant-tls-'))
})
after(() => {
  ca.dispose()
  rmSync(dir, { recursive: true, force: true })
})

/** The files fakemerchant is given, rewritten in place as an operator's renewal would. */
function install(cert: TestCertificate, key: TestCertificate = cert): { certFile: string; keyFile: string } {
  const files = { certFile: join(dir, 'server.crt'), keyFile: join(dir, 'server.key') }
  copyFileSync(cert.certFile, files.certFile)
  copyFileSync(key.keyFile, files.keyFile)
  return files
}

const baseOf = (url: string) => url.replace(/\/mcp$/, '')

describe('fakemerchant --tls-cert/--tls-key', () => {
  test('SIGHUP serves the renewed certificate without failing a request; a bad pair keeps the old one', async (t) => {
    const [first, second, third] = [ca.issue(), ca.issue(), ca.issue()]
    const files = install(first)
    const p = runFakemerchant(['--port', '0', '--tls-cert', files.certFile, '--tls-key', files.keyFile])
    try {
      const url = (await p.printed(/serving (https:\/\/\S+) \(data/))[1] as string
      const base = baseOf(url)
      await p.printed(/REST at https:\/\/\S+ \(base URL https:\/\//)
      const trust = { secret: SECRET, ca: ca.caCert }
      assert.equal(await freshFingerprint(base, trust), first.fingerprint256)
      const callers = startCallers(3, [base], '/v1/transactions/ch_9001', { ca: ca.caCert, secret: () => SECRET })
      try {
        await callers.more(5)
        install(second)
        const sent = performance.now()
        p.child.kill('SIGHUP')
        const reloadMs = await saidWithin(p, 'fakemerchant: reloaded: TLS certificate', sent)
        assert.equal(await freshFingerprint(base, trust), second.fingerprint256)
        await callers.more(5)
        // The certificate of one leaf with the key of another: refused, the renewed pair kept, the process serving.
        install(third, second)
        p.child.kill('SIGHUP')
        await p.says(
          'fakemerchant: reload: the TLS key does not match the certificate; the old TLS certificate is kept',
        )
        assert.equal(await freshFingerprint(base, trust), second.fingerprint256)
        await callers.more(5)
        await callers.stop()
        assert.deepEqual(callers.failures, [])
        assert.equal(p.child.exitCode, null)
        assert.equal(p.stderr().includes('BEGIN'), false)
        t.diagnostic(`SIGHUP → "reloaded" line: ${reloadMs.toFixed(0)} ms; requests ${callers.counts.join('/')}`)
      } finally {
        await callers.stop()
      }
    } finally {
      p.child.kill('SIGTERM')
      await p.exited
    }
  })

  test('one flag without the other is a usage error naming both; an unreadable file too', async () => {
    const leaf = ca.issue()
    for (const [args, problem] of [
      [['--tls-cert', leaf.certFile], '--tls-cert needs --tls-key'],
      [['--tls-key', leaf.keyFile], '--tls-key needs --tls-cert'],
    ] as const) {
      const p = runFakemerchant(['--port', '0', ...args])
      assert.equal(await p.exited, 2)
      assert.deepEqual(p.said(), [`fakemerchant: ${problem}`, 'see fakemerchant --help'])
    }
    const p = runFakemerchant(['--port', '0', '--tls-cert', join(dir, 'missing.crt'), '--tls-key', leaf.keyFile])
    assert.equal(await p.exited, 2)
    assert.equal(p.said()[0], 'fakemerchant: --tls-cert/--tls-key: the TLS certificate file cannot be read (ENOENT)')
  })

  const root = process.getuid?.() === 0
  test('as root, it serves https on port 443', async (t) => {
    if (!root) return t.skip('not root: port 443 cannot be bound')
    if (!(await portFree(443))) return t.skip('port 443 is in use on 127.0.0.1')
    const leaf = ca.issue()
    const p = runFakemerchant(['--port', '443', '--tls-cert', leaf.certFile, '--tls-key', leaf.keyFile])
    try {
      const url = (await p.printed(/serving (https:\/\/\S+) \(data/))[1] as string
      assert.equal(url, 'https://127.0.0.1:443/mcp')
      assert.equal(await freshFingerprint(baseOf(url), { secret: SECRET, ca: ca.caCert }), leaf.fingerprint256)
    } finally {
      p.child.kill('SIGTERM')
      await p.exited
    }
  })
})

/** Waits for `line` (polling every millisecond, to time it); the ms from `since` to when it was seen. */
async function saidWithin(p: FakemerchantProcess, line: string, since: number): Promise<number> {
  while (!p.said().includes(line)) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`fakemerchant ended: ${p.stderr()}`)
    await new Promise((r) => setTimeout(r, 1))
  }
  return performance.now() - since
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer()
    s.once('error', () => resolve(false))
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)))
  })
}
