// Rotating the signing secret without a restart (issue 29 §3): two replicas on one PostgreSQL schema go old →
// old+new → new with setSecrets while signed callers keep calling, and fakemerchant does the same from a rewritten
// --signing-secret-file on SIGHUP. No request correctly signed with a secret the server holds is refused; afterwards
// the old secret gets 401; signatures_verified_total{secret} shows which position verified. Bad lists and files are
// refused by code, the old secrets kept, never a value in a message.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { makeTestCertificateAuthority, type TestCertificateAuthority } from '@tollgate/test-support'
import { pino } from 'pino'
import { readSecretsFile, SecretsError } from '../src/index.js'
import { type FakemerchantProcess, runFakemerchant } from './fakemerchant-process.js'
import { startTestProvider, type TestProvider } from './helpers.js'
import { freshFingerprint, httpsGet, startCallers } from './https-rest.js'
import { dropSchemas, PG_URL, probePostgres, uniqueSchema } from './postgres.js'
import { rest } from './rest-helpers.js'

const OLD = 'srmps_rotation_old_0123456789abcdef01'
const NEW = 'srmps_rotation_new_fedcba987654321001'
const pgSkip = await probePostgres()

let ca: TestCertificateAuthority
let dir: string
before(() => {
  ca = makeTestCertificateAuthority()
  dir = mkdtempSync(join(tmpdir(), 'tollgate-rotation-'))
})
after(() => {
  ca.dispose()
  rmSync(dir, { recursive: true, force: true })
})

/** signatures_verified_total by position, from the admin port. */
async function verified(adminUrl: string | undefined): Promise<{ 1: number; 2: number }> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text()
  const read = (position: string) => {
    const m = new RegExp(`^tollgate_provider_signatures_verified_total\\{secret="${position}"\\} (\\d+)$`, 'm').exec(
      text,
    )
    assert.ok(m, `secret="${position}" is exported`)
    return Number(m[1])
  }
  return { 1: read('1'), 2: read('2') }
}

const noValue = (e: unknown) => !/rotation_(old|new)|srmp_live/.test(String((e as Error).message))

describe('readSecretsFile', () => {
  test('one or two secrets, one a line; blank lines and surrounding whitespace ignored', async () => {
    const file = join(dir, 'ok.secrets')
    writeFileSync(file, `\n  ${OLD}  \r\n\n\t${NEW}\n\n`)
    assert.deepEqual(await readSecretsFile(file), [OLD, NEW])
    writeFileSync(file, NEW)
    assert.deepEqual(await readSecretsFile(file), [NEW])
  })

  test('empty, too many, malformed (naming the line), mixed environments, unreadable: coded, no value echoed', async () => {
    const file = join(dir, 'bad.secrets')
    const cases: [string, string, number?][] = [
      ['\n  \n', 'ERR_PROVIDER_SECRETS_EMPTY'],
      [`${OLD}\n${NEW}\n${OLD}x\n`, 'ERR_PROVIDER_SECRETS_TOO_MANY'],
      [`${OLD}\n\nsrmps_rotation_new has a space\n`, 'ERR_PROVIDER_SECRET_MALFORMED', 3],
      [`${OLD},${NEW}\n`, 'ERR_PROVIDER_SECRET_MALFORMED', 1],
      ['rotation_old_no_prefix\n', 'ERR_PROVIDER_SECRET_MALFORMED', 1],
      [`${OLD}\nsrmp_live_rotation_new_0123456789\n`, 'ERR_PROVIDER_SECRETS_ENVIRONMENT'],
    ]
    for (const [content, code, line] of cases) {
      writeFileSync(file, content)
      await assert.rejects(readSecretsFile(file), (e: unknown) => {
        assert.ok(e instanceof SecretsError, String(e))
        assert.equal(e.code, code)
        if (line !== undefined) assert.equal(e.line, line)
        assert.ok(noValue(e), e.message)
        return true
      })
    }
    await assert.rejects(readSecretsFile(join(dir, 'missing.secrets')), {
      code: 'ERR_PROVIDER_SECRETS_FILE_UNREADABLE',
      message: 'the signing secrets file cannot be read (ENOENT)',
    })
  })
})

test('setSecrets: a refusal is one log line with its code and no value; a replacement is one line with the count', async () => {
  const lines: Record<string, unknown>[] = []
  const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) })
  const p = await startTestProvider({ secrets: [OLD], logger })
  try {
    const before = lines.length
    assert.throws(() => p.setSecrets(['srmp_live_rotation_new_0123456789']), {
      code: 'ERR_PROVIDER_SECRETS_ENVIRONMENT',
    })
    p.setSecrets([OLD, NEW])
    const logged = lines.slice(before)
    assert.deepEqual(
      logged.map((l) => [l.msg, l.code ?? l.secrets]),
      [
        ['signing secrets refused: the old ones are kept', 'ERR_PROVIDER_SECRETS_ENVIRONMENT'],
        ['signing secrets replaced', 2],
      ],
    )
    assert.doesNotMatch(JSON.stringify(logged), /rotation_|srmp_live/)
  } finally {
    await p.stop()
  }
})

describe('setSecrets on two replicas sharing one PostgreSQL schema', { skip: pgSkip }, () => {
  const schema = uniqueSchema('rotation')
  let replicas: TestProvider[] = []
  before(async () => {
    const leaf = ca.issue()
    const options = {
      secrets: [OLD],
      tls: { cert: leaf.cert, key: leaf.key },
      adminPort: 0,
      store: { kind: 'postgres' as const, connectionString: PG_URL, schema },
    }
    // One after the other: the first creates the schema and seeds the demo ledger.
    replicas = [await startTestProvider(options)]
    replicas.push(await startTestProvider(options))
  })
  after(async () => {
    for (const r of replicas) await r.stop()
    await dropSchemas(schema)
  })

  test('old → old+new → new under load: no request refused, then the old secret gets 401', async (t) => {
    const [a, b] = replicas as [TestProvider, TestProvider]
    let signWith = OLD // what the platform signs with
    const callers = startCallers(
      4,
      replicas.map((r) => r.baseUrl),
      '/v1/transactions/ch_9001',
      { ca: ca.caCert, secret: () => signWith },
    )
    const timings: number[] = []
    const setBoth = (secrets: string[]) => {
      for (const r of replicas) {
        const started = performance.now()
        r.setSecrets(secrets)
        timings.push(performance.now() - started)
      }
    }
    try {
      await callers.more(10)
      const step1 = await Promise.all(replicas.map((r) => verified(r.adminUrl)))
      for (const v of step1) assert.ok(v[1] > 0 && v[2] === 0, JSON.stringify(v))
      // Step 2: the new secret added as line 2 on every replica; the platform still signs with the old.
      setBoth([OLD, NEW])
      await callers.more(10)
      // The platform switches to the new secret: position 2 counts, position 1 stops moving.
      signWith = NEW
      await callers.more(3) // every request signed with the old one has been answered
      const switched = await Promise.all(replicas.map((r) => verified(r.adminUrl)))
      await callers.more(10)
      const later = await Promise.all(replicas.map((r) => verified(r.adminUrl)))
      for (const [i, v] of later.entries()) {
        assert.equal(v[1], switched[i]?.[1], 'secret="1" (the old one) no longer verifies anything')
        assert.ok(v[2] > (switched[i]?.[2] ?? 0), 'secret="2" (the new one) verifies the traffic')
      }
      // Step 3: the old secret removed; the new one is position 1 now.
      setBoth([NEW])
      await callers.more(10)
      await callers.stop()
      assert.deepEqual(callers.failures, [])
      const last = await Promise.all(replicas.map((r) => verified(r.adminUrl)))
      for (const [i, v] of last.entries()) assert.ok(v[1] > (later[i]?.[1] ?? 0))
      for (const r of [a, b]) {
        const agentless = { ca: ca.caCert, agent: new (await import('node:https')).Agent({ keepAlive: false }) }
        const old = await httpsGet(r.baseUrl, '/v1/transactions/ch_9001', { ...agentless, secret: OLD })
        const now = await httpsGet(r.baseUrl, '/v1/transactions/ch_9001', { ...agentless, secret: NEW })
        assert.deepEqual([old.status, now.status], [401, 200])
        agentless.agent.destroy()
      }
      t.diagnostic(
        `setSecrets took ${Math.max(...timings).toFixed(3)} ms at most; requests ${callers.counts.join('/')}, none refused`,
      )
    } finally {
      await callers.stop()
    }
  })

  test('a list that switches environment, is malformed, empty or too long is refused; the old secrets kept', async () => {
    const [a] = replicas as [TestProvider]
    const before = await verified(a.adminUrl)
    for (const [list, code] of [
      [['srmp_live_rotation_new_0123456789'], 'ERR_PROVIDER_SECRETS_ENVIRONMENT'],
      [[NEW, 'srmps_rotation new'], 'ERR_PROVIDER_SECRET_MALFORMED'],
      [[], 'ERR_PROVIDER_SECRETS_EMPTY'],
      [[NEW, OLD, NEW], 'ERR_PROVIDER_SECRETS_TOO_MANY'],
    ] as const) {
      assert.throws(
        () => a.setSecrets(list),
        (e: unknown) => e instanceof SecretsError && e.code === code && noValue(e),
      )
    }
    const agent = new (await import('node:https')).Agent({ keepAlive: false })
    const r = await httpsGet(a.baseUrl, '/v1/describe', { ca: ca.caCert, agent, secret: NEW })
    agent.destroy()
    assert.equal(r.status, 200)
    assert.equal((await verified(a.adminUrl))[1], before[1] + 1)
  })
})

describe('fakemerchant --signing-secret-file', () => {
  test('SIGNING_SECRET with a comma keeps working: both secrets verify, by position', async () => {
    const p = runFakemerchant(['--port', '0', '--admin-port', '0'], { ...process.env, SIGNING_SECRET: `${OLD},${NEW}` })
    try {
      const base = ((await p.printed(/serving (http:\/\/\S+) \(data/))[1] as string).replace(/\/mcp$/, '')
      const adminUrl = (await p.printed(/metrics at (http:\/\/\S+)\/metrics/))[1] as string
      for (const secret of [OLD, NEW, NEW])
        assert.equal((await rest(base, 'GET', '/v1/describe', { secret })).status, 200)
      assert.deepEqual(await verified(adminUrl), { 1: 1, 2: 2 })
    } finally {
      p.child.kill('SIGTERM')
      await p.exited
    }
  })

  async function sighup(p: FakemerchantProcess, line: string): Promise<number> {
    const sent = performance.now()
    const seen = p.said().filter((l) => l === line).length
    p.child.kill('SIGHUP')
    while (p.said().filter((l) => l === line).length === seen) {
      if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`fakemerchant ended: ${p.stderr()}`)
      await new Promise((r) => setTimeout(r, 1))
      // A bound so a missing line fails with what was said instead of hanging the suite.
      if (performance.now() - sent > 30_000) throw new Error(`fakemerchant did not say ${line}: ${p.said().join('\n')}`)
    }
    return performance.now() - sent
  }

  test('SIGHUP with a rewritten file rotates under load; a switching or malformed file is refused', async (t) => {
    const leaf = ca.issue()
    const file = join(dir, 'fakemerchant.secrets')
    writeFileSync(file, `${OLD}\n`)
    const env = { ...process.env }
    delete env.SIGNING_SECRET
    const p = runFakemerchant(
      [
        '--port',
        '0',
        '--admin-port',
        '0',
        '--tls-cert',
        leaf.certFile,
        '--tls-key',
        leaf.keyFile,
        '--signing-secret-file',
        file,
      ],
      env,
    )
    try {
      const base = ((await p.printed(/serving (https:\/\/\S+) \(data/))[1] as string).replace(/\/mcp$/, '')
      const adminUrl = (await p.printed(/metrics at (http:\/\/\S+)\/metrics/))[1] as string
      assert.equal(await freshFingerprint(base, { ca: ca.caCert, secret: OLD }), leaf.fingerprint256)
      let signWith = OLD
      const callers = startCallers(3, [base], '/v1/transactions/ch_9001', { ca: ca.caCert, secret: () => signWith })
      const took: number[] = []
      try {
        await callers.more(5)
        writeFileSync(file, `${OLD}\n${NEW}\n`)
        took.push(await sighup(p, 'fakemerchant: reloaded: TLS certificate, signing secrets (2)'))
        await callers.more(5)
        signWith = NEW
        await callers.more(5)
        assert.ok((await verified(adminUrl))[2] > 0)
        // Refused files: the running secrets (old + new) stay.
        writeFileSync(file, 'srmp_live_rotation_new_0123456789\n')
        await sighup(
          p,
          'fakemerchant: reload: the new signing secrets are production secrets and this server runs in sandbox: an environment does not change without a restart; the old signing secrets are kept',
        )
        writeFileSync(file, `${NEW}\nsrmps_rotation bad\n`)
        await sighup(
          p,
          'fakemerchant: reload: line 2 of the signing secrets file is not a secret: srmps_… (sandbox) or srmp_… (production) followed by printable characters without spaces or commas; the old signing secrets are kept',
        )
        await callers.more(5)
        writeFileSync(file, `${NEW}\n`)
        took.push(await sighup(p, 'fakemerchant: reloaded: TLS certificate, signing secrets (1)'))
        await callers.more(5)
        await callers.stop()
        assert.deepEqual(callers.failures, [])
        const agent = new (await import('node:https')).Agent({ keepAlive: false })
        const old = await httpsGet(base, '/v1/describe', { ca: ca.caCert, agent, secret: OLD })
        agent.destroy()
        assert.equal(old.status, 401)
        assert.equal(p.stderr().includes('rotation_'), false)
        assert.equal(p.child.exitCode, null)
        t.diagnostic(`SIGHUP → "reloaded" line: ${took.map((ms) => ms.toFixed(0)).join(', ')} ms`)
      } finally {
        await callers.stop()
      }
    } finally {
      p.child.kill('SIGTERM')
      await p.exited
    }
  })

  test('a production secret in the file exits 2; SIGNING_SECRET with the flag is a usage error', async () => {
    const file = join(dir, 'live.secrets')
    writeFileSync(file, 'srmp_live_rotation_0123456789\n')
    const env = { ...process.env }
    delete env.SIGNING_SECRET
    const live = runFakemerchant(['--port', '0', '--signing-secret-file', file], env)
    assert.equal(await live.exited, 2)
    assert.deepEqual(live.said(), [
      'fakemerchant: --signing-secret-file holds a production secret (srmp_…); fakemerchant serves demo data and needs a sandbox secret (srmps_…)',
    ])
    const both = runFakemerchant(['--port', '0', '--signing-secret-file', file], { ...env, SIGNING_SECRET: OLD })
    assert.equal(await both.exited, 2)
    assert.equal(both.said()[0], 'fakemerchant: SIGNING_SECRET and --signing-secret-file exclude each other: give one')
  })
})
