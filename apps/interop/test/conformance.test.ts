// The official MCP conformance suite's server scenarios, for both eras (the 2025-11-25 and 2026-07-28 requirement
// sets, each at its own wire), against fakemerchant (the provider on its demo ledger) and quenchz. Each runs behind
// a credential proxy of ours (HMAC signature / bearer token): the suite is a generic client and sends neither.
// Every failing check must be listed in conformance/not-applicable.json for that server@era with its reason, and
// every listed check must still fail; everything else the suite runs must pass.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { type RunningProvider, startProvider } from '@tollgate/provider'
import {
  type Era,
  judge,
  NOT_APPLICABLE_FILE,
  readNotApplicable,
  runConformance,
  type ServerName,
} from './support/conformance-suite.js'
import { type CredentialProxy, startCredentialProxy } from './support/credential-proxy.js'
import { type ServerProcess, startServerProcess } from './support/processes.js'

const SECRET = 'srmps_interop_6b0c1f2e3d4a59687a9b8c7d6e5f4031'
const ERAS: readonly Era[] = ['2025-11-25', '2026-07-28']
const REQUIRED = process.env.TOLLGATE_REQUIRE_SERVICES === '1'
const OVER_BUDGET = 'this caller has spent its share of the upstream budget'
let overBudget = 0

const scratch = mkdtempSync(join(tmpdir(), 'tollgate-conformance-'))
let provider: RunningProvider | undefined
let quenchz: ServerProcess | undefined
const proxies: Partial<Record<ServerName, CredentialProxy>> = {}

before(async () => {
  provider = await startProvider({
    secrets: [SECRET],
    logger: false,
    store: { kind: 'sqlite', file: join(scratch, 'fakemerchant.sqlite') },
    demoLedger: {},
  })
  proxies.provider = await startCredentialProxy(provider.url, { kind: 'hmac', secret: SECRET })
  // quenchz on an empty recordings directory: the suite never asks for a rate, so no shared data is needed.
  const recordings = join(scratch, 'recordings')
  mkdirSync(recordings)
  writeFileSync(join(recordings, 'index.json'), '[]')
  const tokensFile = join(scratch, 'tokens.json')
  // A budget that refills (60 calls a second): the suite makes some 60 calls, and answers after the caller's share
  // is spent would test the budget instead of the protocol (the test asserts that none was refused for budget).
  quenchz = await startServerProcess(
    'quenchz',
    [
      '--port',
      '0',
      '--tokens-file',
      tokensFile,
      '--source',
      'recordings',
      '--recordings',
      recordings,
      '--budget-clock',
      'monotonic',
    ],
    scratch,
    /^quenchz listening on (\S+)/m,
  )
  const tokens = JSON.parse(readFileSync(tokensFile, 'utf8')) as { tokens: { quietForThisResource: string } }
  proxies.quenchz = await startCredentialProxy(
    quenchz.url,
    { kind: 'bearer', token: tokens.tokens.quietForThisResource },
    (body) => {
      if (body.includes(OVER_BUDGET)) overBudget++
    },
  )
})

after(async () => {
  for (const p of Object.values(proxies)) await p?.close()
  await provider?.close()
  await quenchz?.stop()
  rmSync(scratch, { recursive: true, force: true })
})

describe('the not-applicable list', () => {
  test('gives every entry a known reason, a known server@era and a scenario:check id, once', () => {
    const file = readNotApplicable()
    const runs = new Set(['provider', 'quenchz'].flatMap((s) => ERAS.map((e) => `${s}@${e}`)))
    const seen = new Set<string>()
    for (const e of file.notApplicable) {
      assert.ok(file.reasons[e.reason] !== undefined, `${e.check}: unknown reason ${e.reason}`)
      assert.match(e.check, /^[a-z0-9-]+:[a-z0-9-]+$/, e.check)
      assert.ok(e.runs.length > 0 && e.runs.every((r) => runs.has(r)), `${e.check}: runs ${e.runs.join(',')}`)
      assert.ok(!seen.has(e.check), `${e.check} is listed twice`)
      seen.add(e.check)
    }
  })
})

for (const server of ['provider', 'quenchz'] as const) {
  for (const era of ERAS) {
    test(`${server} passes every applicable ${era} conformance check`, { timeout: 300_000 }, async (t) => {
      const proxy = proxies[server]
      assert.ok(proxy !== undefined)
      const run = await runConformance(proxy.url, era, join(scratch, `${server}-${era}`))
      if (run.fetchFailed && !REQUIRED) {
        t.skip(`npx could not fetch the conformance suite (no registry?): ${run.output.slice(-300)}`)
        return
      }
      assert.match(run.nodeVersion, /^v22\./, `the suite must run on Node 22:\n${run.output.slice(-2000)}`)
      // Every scenario the requirement set names ran and wrote its checks (none silently missing).
      assert.ok(run.scenarios.size >= (era === '2025-11-25' ? 30 : 45), `only ${run.scenarios.size} scenarios ran`)
      const verdict = judge(run, server, era)
      assert.deepEqual(
        verdict.unexpected,
        [],
        `failing checks not listed in ${NOT_APPLICABLE_FILE} for ${server}@${era} (fix the server, or list them with a reason)`,
      )
      assert.deepEqual(verdict.stale, [], `listed for ${server}@${era} but passing now: remove them from the list`)
      assert.ok(verdict.passed > 30, `only ${verdict.passed} checks passed`)
      assert.equal(overBudget, 0, 'quenchz refused calls for budget: the run tested the budget, not the protocol')
      t.diagnostic(`${server}@${era}: ${verdict.passed} checks passed, ${verdict.excused} not applicable`)
    })
  }
}
