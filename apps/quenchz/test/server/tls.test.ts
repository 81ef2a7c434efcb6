// quenchz serving HTTPS itself (--tls-cert/--tls-key), as its own process with a private CA: the official MCP clients
// list and call tools over https; SIGHUP re-reads the files, so new handshakes see the new certificate while a
// request already under way on an open connection is answered on it; a bad pair is refused with one log line and
// the old kept; SIGHUP without TLS stops nothing. The admin port stays plain HTTP.
import assert from 'node:assert/strict'
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:https'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { TLSSocket } from 'node:tls'
import { createAudience, createInProcessIssuer } from '@tollgate/gate'
import {
  httpsFetch,
  makeTestCertificateAuthority,
  type TestCertificate,
  type TestCertificateAuthority,
} from '@tollgate/test-support'
import { main } from '../../src/cli.ts'
import { startQuenchz } from '../../src/server/start-quenchz.ts'
import { type CliProcess, startCliProcess } from './support/cli-process.ts'
import { connect } from './support/clients.ts'
import { modernToolCall } from './support/raw-mcp.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'
import { until } from './support/wait.ts'

const { scratch, empty } = scratchWithEmptyRecordings('quenchz-tls-')
after(() => rmSync(scratch, { recursive: true, force: true }))
let ca: TestCertificateAuthority
before(() => {
  ca = makeTestCertificateAuthority()
})
after(() => ca?.dispose())

const CERT = join(scratch, 'server.pem')
const KEY = join(scratch, 'server.key')
/** Puts `leaf` where quenchz reads its pair from (what certbot or a secret mount does). */
const install = (leaf: Pick<TestCertificate, 'certFile' | 'keyFile'>) => {
  copyFileSync(leaf.certFile, CERT)
  copyFileSync(leaf.keyFile, KEY)
}

/** GET `path` on a connection of its own; the status and the certificate that connection was served. */
function getOnce(url: string, path: string): Promise<{ status: number; fingerprint: string }> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca: ca.caCert, keepAlive: false })
    request(new URL(path, url), { agent }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256
      res.resume()
      res.on('end', () => {
        agent.destroy()
        resolve({ status: res.statusCode ?? 0, fingerprint })
      })
    })
      .on('error', reject)
      .end()
  })
}

describe('quenchz serving HTTPS with --tls-cert and --tls-key', () => {
  let first: TestCertificate
  let second: TestCertificate
  let quenchz: CliProcess
  let token: string
  const tokensFile = join(scratch, 'tokens.json')
  before(async () => {
    first = ca.issue()
    second = ca.issue()
    install(first)
    quenchz = await startCliProcess(
      [
        ...['--port', '0', '--tokens-file', tokensFile, '--tls-cert', CERT, '--tls-key', KEY],
        ...['--source', 'recordings', '--recordings', empty, '--admin-port', '0'],
      ],
      scratch,
    )
    const manifest = JSON.parse(readFileSync(tokensFile, 'utf8')) as { url: string; tokens: Record<string, string> }
    assert.equal(manifest.url, quenchz.url, 'the tokens file names the https URL')
    token = manifest.tokens.greedyForThisResource as string
  })
  after(() => quenchz?.stop())

  test('the URL is https; the official v1 and v2 clients list the tools and call one over it', async () => {
    assert.match(quenchz.url, /^https:\/\/127\.0\.0\.1:\d+\/mcp$/)
    for (const path of ['v1', 'v2-modern'] as const) {
      const trusting = httpsFetch(ca.caCert)
      const client = await connect(path, quenchz.url, token, { fetch: trusting.fetch })
      try {
        const names = (await client.listTools()).tools.map((t) => t.name)
        assert.ok(names.includes('calendar.why'), `${path}: ${names.join(', ')}`)
        const result = await client.callTool('calendar.why', { day: '2026-04-03' })
        assert.equal(result.isError ?? false, false, `${path}: ${JSON.stringify(result.content)}`)
      } finally {
        await client.close()
        trusting.close()
      }
      assert.deepEqual([...new Set(trusting.certificates)], [first.fingerprint256], `${path} was served the first pair`)
    }
  })

  test('the admin port stays plain HTTP', async () => {
    assert.match(quenchz.admin as string, /^http:\/\//)
    const res = await fetch(new URL('/livez', quenchz.admin))
    assert.equal(res.status, 200)
    await res.text()
  })

  test('SIGHUP after the files change: new handshakes get the new certificate; a request under way on an open connection is answered on it', async () => {
    assert.equal((await getOnce(quenchz.url, '/livez')).fingerprint, first.fingerprint256)
    // A tools/call whose body is still arriving when the pair is swapped: its connection was set up with the old pair.
    const call = modernToolCall(token, 1, 'calendar.why', { day: '2026-04-03' })
    const agent = new Agent({ ca: ca.caCert, keepAlive: false })
    let answerRequest: ReturnType<typeof request> | undefined
    let socketReady: () => void = () => {}
    const connected = new Promise<void>((resolve) => {
      socketReady = resolve
    })
    const answer = new Promise<{ status: number; fingerprint: string; body: string }>((resolve, reject) => {
      const req = request(quenchz.url, { method: 'POST', agent, headers: call.headers }, (res) => {
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c) => {
          body += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, fingerprint, body }))
      })
      req.on('error', reject)
      req.on('socket', (s) => s.once('secureConnect', () => socketReady()))
      req.write(call.body.slice(0, 10))
      answerRequest = req
    })
    await connected
    const reloadsBefore = quenchz.logs.filter((l) => l.msg === 'TLS certificate reloaded').length
    install(second)
    quenchz.child.kill('SIGHUP')
    await until(
      'quenchz logged the reload',
      async () => quenchz.logs.filter((l) => l.msg === 'TLS certificate reloaded').length > reloadsBefore,
    )
    const reloaded = quenchz.logs.filter((l) => l.msg === 'TLS certificate reloaded').at(-1) as Record<string, unknown>
    assert.equal(reloaded.fingerprint256, second.fingerprint256)
    // New handshakes see the new certificate, over the official client as over a plain GET.
    assert.equal((await getOnce(quenchz.url, '/livez')).fingerprint, second.fingerprint256)
    const trusting = httpsFetch(ca.caCert)
    const client = await connect('v2-modern', quenchz.url, token, { fetch: trusting.fetch })
    assert.ok((await client.listTools()).tools.length > 0)
    await client.close()
    trusting.close()
    assert.deepEqual([...new Set(trusting.certificates)], [second.fingerprint256])
    // The request begun before the swap finishes on its connection, with the old certificate, and is answered.
    answerRequest?.end(call.body.slice(10))
    const done = await answer
    agent.destroy()
    assert.equal(done.status, 200, done.body)
    assert.equal(done.fingerprint, first.fingerprint256)
    assert.match(done.body, /"result"/)
    assert.equal(quenchz.child.exitCode, null, 'still serving')
  })

  test('a bad pair on SIGHUP is refused with one log line naming the part; the certificate in use stays', async () => {
    const inUse = (await getOnce(quenchz.url, '/livez')).fingerprint
    const other = ca.issue()
    const refusedBefore = quenchz.logs.filter((l) => l.msg === 'TLS reload refused: the old certificate is kept').length
    // The certificate of one leaf with the key of another; then a certificate file that is not PEM.
    copyFileSync(other.certFile, CERT)
    copyFileSync(first.keyFile, KEY)
    quenchz.child.kill('SIGHUP')
    await until(
      'quenchz refused the pair',
      async () =>
        quenchz.logs.filter((l) => l.msg === 'TLS reload refused: the old certificate is kept').length > refusedBefore,
    )
    writeFileSync(CERT, 'not a certificate')
    quenchz.child.kill('SIGHUP')
    await until(
      'quenchz refused the file',
      async () =>
        quenchz.logs.filter((l) => l.msg === 'TLS reload refused: the old certificate is kept').length >
        refusedBefore + 1,
    )
    const refused = quenchz.logs.filter((l) => l.msg === 'TLS reload refused: the old certificate is kept').slice(-2)
    assert.deepEqual(
      refused.map((l) => [l.code, l.which, l.level]),
      [
        ['ERR_MCP_ENDPOINT_TLS', 'pair', 50],
        ['ERR_MCP_ENDPOINT_TLS', 'cert', 50],
      ],
    )
    // No byte of either file in the log.
    const logged = JSON.stringify(quenchz.logs)
    assert.ok(!logged.includes('not a certificate') && !logged.includes('PRIVATE KEY'))
    const after = await getOnce(quenchz.url, '/livez')
    assert.deepEqual(after, { status: 200, fingerprint: inUse })
  })
})

describe('SIGHUP without TLS, and the flags', () => {
  test('SIGHUP on a quenchz without --tls-cert stops nothing: it logs that and goes on answering', async () => {
    const quenchz = await startCliProcess(
      ['--port', '0', '--tokens-file', join(scratch, 'plain.json'), '--source', 'recordings', '--recordings', empty],
      scratch,
    )
    try {
      quenchz.child.kill('SIGHUP')
      await until('quenchz logged the SIGHUP', async () => quenchz.logs.some((l) => l.signal === 'SIGHUP'))
      assert.equal(
        quenchz.logs.find((l) => l.signal === 'SIGHUP')?.msg,
        'nothing to reload: serving without --tls-cert',
      )
      const res = await fetch(new URL('/livez', quenchz.url))
      assert.equal(res.status, 200)
      await res.text()
    } finally {
      await quenchz.stop()
    }
  })

  const run = async (args: string[]) => {
    const lines: string[] = []
    const code = await main(
      ['--tokens-file', join(scratch, 'flags.json'), '--source', 'recordings', '--recordings', empty, ...args],
      {
        stderr: (l) => lines.push(l),
        serve: false,
        cwd: scratch,
      },
    )
    return { code, lines }
  }

  test('--tls-cert without --tls-key (or the reverse) is a usage error naming both', async () => {
    for (const [args, problem] of [
      [['--tls-cert', CERT], '--tls-cert needs --tls-key'],
      [['--tls-key', KEY], '--tls-key needs --tls-cert'],
    ] as const) {
      assert.deepEqual(await run([...args]), {
        code: 2,
        lines: [`quenchz: ${problem}`, 'see quenchz --help'],
      })
    }
  })

  test('a pair that cannot be read or used at start exits 1 with one line naming the part, never a byte', async () => {
    const leaf = ca.issue()
    const other = ca.issue()
    assert.deepEqual(await run(['--tls-cert', join(scratch, 'missing.pem'), '--tls-key', leaf.keyFile]), {
      code: 1,
      lines: ['quenchz: --tls-cert/--tls-key: the TLS certificate file cannot be read (ENOENT)'],
    })
    const mismatch = await run(['--tls-cert', leaf.certFile, '--tls-key', other.keyFile])
    assert.equal(mismatch.code, 1)
    assert.equal(mismatch.lines.length, 1)
    assert.match(mismatch.lines[0] as string, /^quenchz: --tls-cert\/--tls-key: /)
    assert.ok(!(mismatch.lines[0] as string).includes('BEGIN'))
  })
})

describe('startQuenchz with tls, and setTls', () => {
  const start = async (tls?: { cert: string; key: string }) => {
    const issuer = await createInProcessIssuer({ issuer: 'https://issuer.invalid', resource: 'https://q.invalid/mcp' })
    return startQuenchz({
      tools: [],
      audience: createAudience({
        resource: 'https://q.invalid/mcp',
        issuer: 'https://issuer.invalid',
        keys: issuer.keySource(),
      }),
      port: 0,
      ...(tls !== undefined && { tls }),
    })
  }

  test('an https URL; setTls swaps the pair for new handshakes; a bad pair throws ERR_MCP_ENDPOINT_TLS and the old stays', async () => {
    const a = ca.issue()
    const b = ca.issue()
    const running = await start({ cert: a.cert, key: a.key })
    try {
      assert.match(running.url, /^https:\/\//)
      assert.equal((await getOnce(running.url, '/')).fingerprint, a.fingerprint256)
      running.setTls({ cert: b.cert, key: b.key })
      assert.equal((await getOnce(running.url, '/')).fingerprint, b.fingerprint256)
      assert.throws(() => running.setTls({ cert: a.cert, key: b.key }), { code: 'ERR_MCP_ENDPOINT_TLS', which: 'pair' })
      assert.equal((await getOnce(running.url, '/')).fingerprint, b.fingerprint256)
    } finally {
      await running.close()
    }
  })

  test('a pair that cannot serve is refused before listening; a plain server refuses setTls', async () => {
    const a = ca.issue()
    const b = ca.issue()
    await assert.rejects(start({ cert: a.cert, key: b.key }), { code: 'ERR_MCP_ENDPOINT_TLS' })
    const plain = await start()
    try {
      assert.match(plain.url, /^http:\/\//)
      assert.throws(() => plain.setTls({ cert: a.cert, key: a.key }), { code: 'ERR_MCP_ENDPOINT_TLS' })
    } finally {
      await plain.close()
    }
  })
})
