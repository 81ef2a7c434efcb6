import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildReport, canonicalJson, type KitRun, verifyReport } from '../src/index.js'

const SECRET = 'srmps_seal_test_secret_0123456789'
const run: KitRun = {
  results: [
    { id: 'discovery', verdict: 'pass', code: null, reason: '2026-07-28 server: server/discover', durationMs: 12 },
    {
      id: 'refund_replay',
      verdict: 'fail',
      code: 'replay_differs',
      reason: 'the same key and arguments answered a different result',
      durationMs: 4,
    },
    {
      id: 'get_operation',
      verdict: 'skip',
      code: 'dependency_failed',
      reason: 'needs refund to pass (it ended fail)',
      durationMs: 0,
    },
  ],
  passed: false,
  transport: 'mcp',
  interrupted: false,
  era: '2026-07-28',
  credentials: { bearerToken: true, edgeHeaderNames: ['X-Edge-Key'] },
  startedAt: new Date('2026-11-30T04:00:00.000Z'),
  finishedAt: new Date('2026-11-30T04:00:01.000Z'),
}
const target = {
  baseUrl: 'http://127.0.0.1:12112/mcp',
  tenant: 't-1',
  customer: 'cus_1001',
  transaction: 'ch_1001',
  subscription: 'sub_1001',
}

test('canonical JSON sorts keys at every level and has no whitespace', () => {
  assert.equal(
    canonicalJson({ b: 1, a: [true, null, 'x', { d: 'é', c: -2 }] }),
    '{"a":[true,null,"x",{"c":-2,"d":"é"}],"b":1}',
  )
  assert.throws(() => canonicalJson({ a: Number.NaN }), TypeError)
})

test('a report carries every check, the kit version, target and time, and its seal verifies', () => {
  const report = buildReport(run, target, SECRET)
  assert.equal(report.kit.name, 'providercheck')
  assert.equal(report.kit.version, '0.1.0')
  assert.equal(report.target.base_url, 'http://127.0.0.1:12112/mcp')
  assert.equal(report.outcome, 'fail')
  assert.deepEqual(report.summary, { pass: 1, fail: 1, skip: 1 })
  assert.deepEqual(report.checks[1], {
    id: 'refund_replay',
    verdict: 'fail',
    code: 'replay_differs',
    reason: 'the same key and arguments answered a different result',
    duration_ms: 4,
  })
  // Names only: whether a bearer token was sent, which edge headers.
  assert.deepEqual(report.credentials, { bearer_token: true, edge_headers: ['X-Edge-Key'] })
  assert.match(report.seal, /^hmac-sha256:[0-9a-f]{64}$/)
  const verdict = verifyReport(Buffer.from(JSON.stringify(report, null, 2)), SECRET)
  assert.equal(verdict.ok, true)
})

test('the seal does not depend on key order or whitespace', () => {
  const report = buildReport(run, target, SECRET)
  const reordered = Object.fromEntries(Object.entries(report).reverse())
  assert.equal(verifyReport(Buffer.from(JSON.stringify(reordered)), SECRET).ok, true)
})

test('a tampered report, a wrong secret, a missing seal or a duplicate key do not verify', () => {
  const report = buildReport(run, target, SECRET)
  const tampered = structuredClone(report)
  ;(tampered.checks[1] as { verdict: string }).verdict = 'pass'
  assert.deepEqual(verifyReport(Buffer.from(JSON.stringify(tampered)), SECRET), { ok: false, reason: 'seal_mismatch' })
  assert.deepEqual(verifyReport(Buffer.from(JSON.stringify(report)), 'srmps_another_secret_000000000'), {
    ok: false,
    reason: 'seal_mismatch',
  })
  const { seal: _seal, ...unsealed } = report
  assert.deepEqual(verifyReport(Buffer.from(JSON.stringify(unsealed)), SECRET), { ok: false, reason: 'unsealed' })
  const text = JSON.stringify(report)
  const duplicated = `${text.slice(0, -1)},"outcome":"pass"}`
  assert.deepEqual(verifyReport(Buffer.from(duplicated), SECRET), { ok: false, reason: 'malformed' })
  assert.deepEqual(verifyReport(Buffer.from('not json'), SECRET), { ok: false, reason: 'malformed' })
})

test('the sealed report records the transport, and a changed transport breaks the seal', () => {
  const rest = buildReport(
    { ...run, transport: 'rest', era: undefined },
    { ...target, baseUrl: 'http://127.0.0.1:12112' },
    SECRET,
  )
  assert.equal(rest.target.transport, 'rest')
  assert.equal(rest.target.era, null)
  assert.equal(buildReport(run, target, SECRET).target.transport, 'mcp')
  const forged = structuredClone(rest)
  ;(forged.target as { transport: string }).transport = 'mcp'
  assert.deepEqual(verifyReport(Buffer.from(JSON.stringify(forged)), SECRET), { ok: false, reason: 'seal_mismatch' })
  assert.equal(verifyReport(Buffer.from(JSON.stringify(rest)), SECRET).ok, true)
})
