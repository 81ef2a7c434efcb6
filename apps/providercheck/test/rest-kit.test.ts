// The kit over REST (issue 8 §3, §5): the real provider passes fresh, after a restart and behind a path-prefix
// proxy; a fault proxy that breaks one REST rule fails exactly the check naming it, with its code.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { startProvider } from '@tollgate/provider'
import { CHECK_IDS, main } from '../src/index.js'
import { type Fault, REST_FAULTS } from './support/fault-proxy.js'
import { freshTarget, restKitArgv, runAgainst, SECRET, verdicts } from './support/kit-harness.js'
import { startStripProxy } from './support/strip-proxy.js'

const IDS: readonly string[] = CHECK_IDS
// Over REST there is no tool list: mcp_profile does not apply; everything else, signature_idempotency_key
// included, must pass.
const REST_PASS = Object.fromEntries(IDS.map((id) => [id, id === 'mcp_profile' ? 'skip not_applicable' : 'pass']))

test('over REST every check passes against a fresh real provider, and again after a restart on fresh data', async () => {
  for (const round of [1, 2]) {
    const target = await freshTarget(undefined, 'json', {}, 'rest')
    try {
      const run = await runAgainst(target.url, 'auto', undefined, 'rest')
      assert.deepEqual(verdicts(run.results), REST_PASS, `round ${round}`)
      assert.equal(run.passed, true)
      assert.equal(run.transport, 'rest')
      assert.equal(run.era, undefined)
    } finally {
      await target.close()
    }
  }
})

test('over REST every check passes through a proxy that strips a path prefix (signature over the public path)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-prefix-'))
  const proxy = await startStripProxy('/chargeless')
  const provider = await startProvider({
    secrets: [SECRET],
    store: { kind: 'sqlite', file: join(dir, 'provider.sqlite') },
    logger: false,
    demoLedger: {},
    publicHost: proxy.host,
    stripPrefix: '/chargeless',
  })
  proxy.upstream = new URL(provider.baseUrl)
  try {
    const run = await runAgainst(`http://${proxy.host}/chargeless`, 'auto', undefined, 'rest')
    assert.deepEqual(verdicts(run.results), REST_PASS)
  } finally {
    await proxy.close()
    await provider.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

const AFTER_TRANSACTION = [
  'refund_dry_run',
  'refund',
  'refund_replay',
  'refund_conflict',
  'refund_exceeds',
  'get_operation',
  'signature_idempotency_key',
]
const MATRIX: { fault: Fault; fails: Record<string, string>; skips: string[] }[] = [
  { fault: 'signature_ignores_key', fails: { signature_idempotency_key: 'signature_ignores_key' }, skips: [] },
  { fault: 'replay_differs', fails: { refund_replay: 'replay_differs' }, skips: [] },
  // The same parsed result in other bytes: over REST a replay must be byte-identical.
  { fault: 'replay_reformatted', fails: { refund_replay: 'replay_differs' }, skips: [] },
  { fault: 'refusal_answered_400', fails: { refund_exceeds: 'status_not_422' }, skips: [] },
  {
    fault: 'float_amounts',
    fails: {
      list_transactions: 'number_not_integer',
      get_transaction: 'number_not_integer',
      get_subscription: 'number_not_integer',
    },
    skips: [...AFTER_TRANSACTION, 'cancel_dry_run', 'cancel_at_period_end', 'cancel_again'],
  },
  { fault: 'conflict_not_detected', fails: { refund_conflict: 'conflict_not_detected' }, skips: [] },
  { fault: 'dry_run_accepts_key', fails: { refund_dry_run: 'dry_run_key_accepted' }, skips: [] },
  // Control: the proxy itself is transparent over REST.
  { fault: 'none', fails: {}, skips: [] },
]

test('the REST fault list and the matrix name the same faults', () => {
  assert.deepEqual(MATRIX.map((m) => m.fault).sort(), [...REST_FAULTS].sort())
})

for (const { fault, fails, skips } of MATRIX) {
  const name =
    Object.keys(fails).length === 0
      ? `REST control: ${fault} passes every check`
      : `REST ${fault} fails ${Object.entries(fails)
          .map(([id, code]) => `${id} (${code})`)
          .join(', ')} and nothing else`
  test(name, async () => {
    const target = await freshTarget(fault, 'json', {}, 'rest')
    try {
      const run = await runAgainst(target.url, 'auto', undefined, 'rest')
      const expected = Object.fromEntries(
        IDS.map((id) => [
          id,
          fails[id] !== undefined
            ? `fail ${fails[id]}`
            : skips.includes(id)
              ? 'skip dependency_failed'
              : (REST_PASS[id] ?? 'pass'),
        ]),
      )
      assert.deepEqual(verdicts(run.results), expected)
      assert.equal(run.passed, Object.keys(fails).length === 0)
    } finally {
      await target.close()
    }
  })
}

test('the CLI runs -transport rest and seals the transport into the report', async () => {
  const target = await freshTarget(undefined, 'json', {}, 'rest')
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-rest-cli-'))
  try {
    const out: string[] = []
    const report = join(dir, 'report.json')
    const env = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET }
    const io = { out: (l: string) => out.push(l), err: (l: string) => out.push(l) }
    const code = await main(restKitArgv(target.url, '-json', report), env, io)
    assert.equal(code, 0, out.join('\n'))
    assert.match(out[0] as string, /: transport rest, sandbox, http:\/\/127\.0\.0\.1:\d+,?/)
    assert.match(out.join('\n'), /^mcp_profile +skip {2}not_applicable +applies to mcp only/m)
    assert.match(out.join('\n'), /^summary: 20 pass, 0 fail, 1 skip of 21 checks in \d+ ms \(rest\): PASS$/m)
    const sealed = JSON.parse(readFileSync(report, 'utf8')) as { target: { transport: string; era: null } }
    assert.equal(sealed.target.transport, 'rest')
    assert.equal(sealed.target.era, null)
    assert.equal(await main(['verify', report], env, io), 0)
  } finally {
    await target.close()
    rmSync(dir, { recursive: true, force: true })
  }
})

test('an MCP endpoint given as the REST base URL fails discovery with a hint, and the rest is skipped', async () => {
  const target = await freshTarget(undefined, 'json', {}, 'rest')
  try {
    const run = await runAgainst(`${target.url}/mcp`, 'auto', undefined, 'rest')
    const discovery = run.results[0]
    assert.equal(discovery?.code, 'unexpected_status')
    assert.match(discovery?.reason ?? '', /not_found \(404\).*is -base-url the REST base URL/)
    assert.equal(run.passed, false)
  } finally {
    await target.close()
  }
})
