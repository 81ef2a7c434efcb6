import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import {
  CREDENTIALS_REJECTED_BODY,
  SIGNATURE_HEADER,
  SignatureVerifier,
  secretEnvironment,
  signatureFor,
  signHeaders,
  TIMESTAMP_HEADER,
} from '../src/index.js'

interface Vector {
  name: string
  secret: string
  timestamp: string
  method: string
  host: string
  path: string
  key: string
  body_hex: string
  signature: string
}
const vectors: Vector[] = JSON.parse(readFileSync(new URL('./vectors/signatures.json', import.meta.url), 'utf8')).cases
const requestOf = (v: Vector) => ({
  method: v.method,
  host: v.host,
  path: v.path,
  key: v.key,
  body: Buffer.from(v.body_hex, 'hex'),
})

for (const v of vectors) {
  test(`matches the independently computed vector: ${v.name}`, () => {
    assert.equal(signatureFor(v.secret, v.timestamp, requestOf(v)), v.signature)
  })
}

const sandbox = 'srmps_unit_test_secret'
const req = { method: 'POST', host: '127.0.0.1:8080', path: '/mcp', body: Buffer.from('{"jsonrpc":"2.0"}') }
const at = (seconds: number) => () => seconds * 1000

test('accepts a request it signed itself within the window', () => {
  const headers = signHeaders(sandbox, req, new Date(1_000_000_000_000))
  const verifier = new SignatureVerifier({ environment: 'sandbox', secrets: [sandbox], now: at(1_000_000_000 + 299) })
  assert.deepEqual(
    verifier.verify({ timestamp: headers[TIMESTAMP_HEADER], signature: headers[SIGNATURE_HEADER] }, req),
    { ok: true, secret: 1 },
  )
})

test('rejects a timestamp more than five minutes away, either way, as stale', () => {
  const headers = signHeaders(sandbox, req, new Date(1_000_000_000_000))
  const given = { timestamp: headers[TIMESTAMP_HEADER], signature: headers[SIGNATURE_HEADER] }
  for (const skew of [301, -301]) {
    const verifier = new SignatureVerifier({
      environment: 'sandbox',
      secrets: [sandbox],
      now: at(1_000_000_000 + skew),
    })
    assert.deepEqual(verifier.verify(given, req), { ok: false, reason: 'stale' })
  }
})

test('rejects a body changed by one byte, another path, method or host', () => {
  const headers = signHeaders(sandbox, req, new Date(1_000_000_000_000))
  const given = { timestamp: headers[TIMESTAMP_HEADER], signature: headers[SIGNATURE_HEADER] }
  const verifier = new SignatureVerifier({ environment: 'sandbox', secrets: [sandbox], now: at(1_000_000_000) })
  for (const changed of [
    { ...req, body: Buffer.from('{"jsonrpc":"2.1"}') },
    { ...req, path: '/mcp/' },
    { ...req, method: 'DELETE' },
    { ...req, host: 'evil.example' },
    { ...req, key: 'k' },
  ]) {
    assert.deepEqual(verifier.verify(given, changed), { ok: false, reason: 'mismatch' })
  }
})

test('treats the host case-insensitively, as the Go reference does', () => {
  const headers = signHeaders(sandbox, { ...req, host: 'Billing.Example.com' }, new Date(1_000_000_000_000))
  const verifier = new SignatureVerifier({ environment: 'sandbox', secrets: [sandbox], now: at(1_000_000_000) })
  const given = { timestamp: headers[TIMESTAMP_HEADER], signature: headers[SIGNATURE_HEADER] }
  assert.deepEqual(verifier.verify(given, { ...req, host: 'billing.example.com' }), { ok: true, secret: 1 })
})

test('reports missing and malformed headers without checking the MAC', () => {
  const verifier = new SignatureVerifier({ environment: 'sandbox', secrets: [sandbox], now: at(1_000_000_000) })
  assert.deepEqual(verifier.verify({ timestamp: undefined, signature: 'v1=00' }, req), { ok: false, reason: 'missing' })
  assert.deepEqual(verifier.verify({ timestamp: '1000000000', signature: undefined }, req), {
    ok: false,
    reason: 'missing',
  })
  for (const [timestamp, signature] of [
    ['1000000000', `v2=${'0'.repeat(64)}`],
    ['1000000000', `v1=${'A'.repeat(64)}`],
    ['-5', `v1=${'0'.repeat(64)}`],
    ['1e9', `v1=${'0'.repeat(64)}`],
    [' 1000000000', `v1=${'0'.repeat(64)}`],
  ] as const) {
    assert.deepEqual(verifier.verify({ timestamp, signature }, req), { ok: false, reason: 'malformed' })
  }
})

test('accepts both production secrets during a rotation, and neither a third nor a sandbox one', () => {
  const oldSecret = 'srmp_old_secret'
  const newSecret = 'srmp_new_secret'
  const verifier = new SignatureVerifier({
    environment: 'production',
    secrets: [oldSecret, newSecret],
    now: at(1_000_000_000),
  })
  for (const [i, secret] of [oldSecret, newSecret].entries()) {
    const h = signHeaders(secret, req, new Date(1_000_000_000_000))
    assert.deepEqual(verifier.verify({ timestamp: h[TIMESTAMP_HEADER], signature: h[SIGNATURE_HEADER] }, req), {
      ok: true,
      secret: i + 1,
    })
  }
  for (const secret of ['srmp_third_secret', 'srmps_sandbox_secret']) {
    const h = signHeaders(secret, req, new Date(1_000_000_000_000))
    assert.deepEqual(verifier.verify({ timestamp: h[TIMESTAMP_HEADER], signature: h[SIGNATURE_HEADER] }, req), {
      ok: false,
      reason: 'mismatch',
    })
  }
})

test('refuses to build a production verifier with a sandbox secret, and other misuse', () => {
  assert.throws(() => new SignatureVerifier({ environment: 'production', secrets: ['srmps_x'] }), {
    code: 'ERR_SIGNING_SECRET_FORMAT',
    message: 'a production signing secret must start with srmp_',
  })
  assert.throws(() => new SignatureVerifier({ environment: 'sandbox', secrets: ['srmp_x'] }), {
    code: 'ERR_SIGNING_SECRET_FORMAT',
  })
  assert.throws(() => new SignatureVerifier({ environment: 'sandbox', secrets: [] }), { code: 'ERR_SIGNING_NO_SECRET' })
  assert.throws(() => new SignatureVerifier({ environment: 'production', secrets: ['srmp_a', 'srmp_b', 'srmp_c'] }), {
    code: 'ERR_SIGNING_TOO_MANY_SECRETS',
  })
  assert.throws(
    () => new SignatureVerifier({ environment: 'sandbox', secrets: ['srmps_a'], toleranceSeconds: -1 }),
    RangeError,
  )
})

test('never puts a secret into an error message', () => {
  const secret = 'srmps_do_not_leak_me'
  try {
    new SignatureVerifier({ environment: 'production', secrets: [secret] })
    assert.fail('expected a throw')
  } catch (error) {
    assert.ok(!String((error as Error).message).includes('do_not_leak_me'))
  }
})

test('classifies secrets by prefix; a bare prefix is no secret', () => {
  assert.equal(secretEnvironment('srmps_abc'), 'sandbox')
  assert.equal(secretEnvironment('srmp_abc'), 'production')
  assert.equal(secretEnvironment('srmps_'), undefined)
  assert.equal(secretEnvironment('srmp_'), undefined)
  assert.equal(secretEnvironment('sk_live_abc'), undefined)
})

test('the 401 body is the REST error envelope, pinned byte for byte', () => {
  assert.equal(
    CREDENTIALS_REJECTED_BODY,
    '{"error":{"code":"credentials_rejected","message":"the request signature was not accepted","retryable":false}}',
  )
})

test('the README errors table lists exactly the codes errors.ts defines', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const source = readFileSync(new URL('../src/errors.ts', import.meta.url), 'utf8')
  const inReadme = new Set([...readme.matchAll(/^\| `(ERR_[A-Z_]+)`/gm)].map((m) => m[1]))
  const inSource = new Set([...source.matchAll(/'(ERR_SIGNING_[A-Z_]+)'/g)].map((m) => m[1]))
  assert.deepEqual([...inReadme].sort(), [...inSource].sort())
})

test('setSecrets replaces the secrets at once and reports which position verified; bad lists keep the old ones', () => {
  const [a, b, c] = ['srmp_rotate_a', 'srmp_rotate_b', 'srmp_rotate_c']
  const verifier = new SignatureVerifier({ environment: 'production', secrets: [a], now: at(1_000_000_000) })
  const check = (secret: string) => {
    const h = signHeaders(secret, req, new Date(1_000_000_000_000))
    return verifier.verify({ timestamp: h[TIMESTAMP_HEADER], signature: h[SIGNATURE_HEADER] }, req)
  }
  assert.deepEqual(check(a), { ok: true, secret: 1 })
  verifier.setSecrets([a, b])
  assert.equal(verifier.secretCount, 2)
  assert.deepEqual(
    [check(a), check(b)],
    [
      { ok: true, secret: 1 },
      { ok: true, secret: 2 },
    ],
  )
  verifier.setSecrets([b])
  assert.deepEqual(
    [check(b), check(a)],
    [
      { ok: true, secret: 1 },
      { ok: false, reason: 'mismatch' },
    ],
  )
  for (const [bad, code] of [
    [[], 'ERR_SIGNING_NO_SECRET'],
    [[a, b, c], 'ERR_SIGNING_TOO_MANY_SECRETS'],
    [['srmps_rotate_sandbox'], 'ERR_SIGNING_SECRET_FORMAT'],
    [[b, 'not_a_secret'], 'ERR_SIGNING_SECRET_FORMAT'],
  ] as const) {
    assert.throws(
      () => verifier.setSecrets(bad),
      (e: unknown) => (e as { code?: string }).code === code && !String((e as Error).message).includes('rotate'),
    )
    assert.deepEqual(check(b), { ok: true, secret: 1 })
    assert.equal(verifier.secretCount, 1)
  }
})
