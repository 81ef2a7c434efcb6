// No demo data in production, and never by default: startProvider needs `billing` or `demoLedger` (opt-in, sandbox
// only) and refuses anything else before listening (coded, naming the fix); fakemerchant refuses a production secret
// with one line. Each refusal is checked to leave nothing listening and nothing written.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import {
  DemoInProductionError,
  DemoLedger,
  type DemoLedgerOptions,
  demoLedgerStore,
  NoBillingError,
  openSqliteStore,
  type ProviderOptions,
  startProvider,
} from '../src/index.js'
import { runFakemerchant } from './fakemerchant-process.js'
import { demoBilling, SECRET, startTestProvider } from './helpers.js'
import { rest } from './rest-helpers.js'

const PRODUCTION = 'srmp_live_do_not_echo_0123456789abcdef'

/** startProvider straight (no test helper adding defaults) on a store file in a fresh folder; `dbFile` must stay unmade. */
async function refused(options: Omit<ProviderOptions, 'store' | 'logger'>, check: (e: unknown) => boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-no-billing-'))
  const dbFile = join(dir, 'provider.sqlite')
  try {
    let error: unknown
    try {
      // Started after all (the refusal missing): closed, so the failing test cannot hang on a listening server.
      await (await startProvider({ ...options, logger: false, store: { kind: 'sqlite', file: dbFile } })).close()
    } catch (e) {
      error = e
    }
    assert.notEqual(error, undefined, 'startProvider refused to start')
    assert.ok(check(error))
    assert.equal(existsSync(dbFile), false, 'refused before the store was opened')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A DemoLedger the caller built (seeded, on a SQLite file of its own). */
async function builtLedger() {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-built-ledger-'))
  const store = openSqliteStore(join(dir, 'ledger.sqlite'))
  const ledger = new DemoLedger(demoLedgerStore(store))
  await ledger.seed()
  return {
    ledger,
    async dispose() {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const demoInProduction = (e: unknown) => {
  assert.ok(e instanceof DemoInProductionError)
  assert.equal(e.code, 'ERR_PROVIDER_DEMO_IN_PRODUCTION')
  assert.match(e.message, /pass `billing`, your BillingPort/)
  assert.equal(e.message.includes('do_not_echo'), false)
  return true
}

describe('startProvider needs a billing system chosen', () => {
  test('sandbox, neither billing nor demoLedger: refused with ERR_PROVIDER_NO_BILLING naming both fixes', async () => {
    await refused({ secrets: [SECRET] }, (e) => {
      assert.ok(e instanceof NoBillingError)
      assert.equal(e.code, 'ERR_PROVIDER_NO_BILLING')
      assert.match(e.message, /pass `billing`, your BillingPort, or `demoLedger: \{\}`/)
      assert.equal(e.message.includes(SECRET), false)
      return true
    })
  })

  test('demoLedger together with billing: a TypeError (two billing systems), in either environment', async () => {
    const demo = await demoBilling()
    try {
      for (const secret of [SECRET, PRODUCTION]) {
        await refused({ secrets: [secret], billing: demo.billing, demoLedger: {} }, (e) => {
          assert.ok(e instanceof TypeError)
          assert.match(e.message, /either billing or demoLedger, not both/)
          return true
        })
      }
    } finally {
      await demo.dispose()
    }
  })

  test('demoLedger that is not an object: a TypeError', async () => {
    for (const demoLedger of [true, null, 'yes', []]) {
      await refused({ secrets: [SECRET], demoLedger: demoLedger as unknown as DemoLedgerOptions }, (e) => {
        assert.ok(e instanceof TypeError)
        assert.match(e.message, /demoLedger must be an object/)
        return true
      })
    }
  })

  test('sandbox: `demoLedger: {}` serves the demo data, and so does a DemoLedger the caller built as billing', async () => {
    const built = await builtLedger()
    const opted = await startTestProvider({ demoLedger: {} })
    const own = await startTestProvider({ billing: built.ledger })
    try {
      for (const p of [opted, own]) {
        const demoCharge = await rest(p.baseUrl, 'GET', '/v1/transactions/ch_9001')
        assert.equal(demoCharge.status, 200, demoCharge.text)
      }
    } finally {
      await opted.stop()
      await own.stop()
      await built.dispose()
    }
  })
})

describe('startProvider in production', () => {
  test('without billing: refused with ERR_PROVIDER_DEMO_IN_PRODUCTION naming `billing`, never the secret', async () => {
    for (const options of [{ secrets: [PRODUCTION] }, { secrets: [PRODUCTION], environment: 'production' as const }]) {
      await refused(options, demoInProduction)
      await assert.rejects(startTestProvider(options), (e: unknown) => {
        assert.ok(e instanceof DemoInProductionError)
        assert.equal(e.code, 'ERR_PROVIDER_DEMO_IN_PRODUCTION')
        assert.match(e.message, /pass `billing`, your BillingPort/)
        assert.equal(e.message.includes('do_not_echo'), false)
        return true
      })
    }
  })

  test('with demoLedger: refused with ERR_PROVIDER_DEMO_IN_PRODUCTION (the demo ledger is sandbox only)', async () => {
    for (const options of [{ secrets: [PRODUCTION] }, { secrets: [PRODUCTION], environment: 'production' as const }]) {
      await refused({ ...options, demoLedger: {} }, demoInProduction)
      await refused({ ...options, demoLedger: { settleAfterMs: 0 } }, demoInProduction)
    }
  })

  test('with a DemoLedger instance as billing: refused with ERR_PROVIDER_DEMO_IN_PRODUCTION', async () => {
    const built = await builtLedger()
    try {
      await refused({ secrets: [PRODUCTION], billing: built.ledger }, demoInProduction)
      // Also one whose prototype is a DemoLedger (a patched ledger): still the demo ledger.
      const patched = Object.assign(Object.create(built.ledger) as DemoLedger, { refund: built.ledger.refund })
      await refused({ secrets: [PRODUCTION], billing: patched }, demoInProduction)
    } finally {
      await built.dispose()
    }
  })

  test('with a billing port it serves production (a port of its own forwarding to a DemoLedger counts)', async () => {
    const demo = await demoBilling()
    const live = await startTestProvider({ secrets: [PRODUCTION], billing: demo.billing })
    const sandbox = await startTestProvider({ demoLedger: {} })
    try {
      assert.equal((await rest(live.baseUrl, 'GET', '/v1/describe', { secret: PRODUCTION })).status, 200)
      const demoCharge = await rest(sandbox.baseUrl, 'GET', '/v1/transactions/ch_9001')
      assert.equal(demoCharge.status, 200, demoCharge.text)
    } finally {
      await live.stop()
      await sandbox.stop()
      await demo.dispose()
    }
  })
})

describe('fakemerchant with a production secret', () => {
  for (const secret of [PRODUCTION, `srmps_sandbox_0123456789abcdef,${PRODUCTION}`]) {
    test(`exits 2 with one line saying it serves demo data (${secret.includes(',') ? 'second of two' : 'alone'})`, async () => {
      const p = runFakemerchant(['--port', '0'], { ...process.env, SIGNING_SECRET: secret })
      assert.equal(await p.exited, 2)
      assert.deepEqual(p.said(), [
        'fakemerchant: SIGNING_SECRET holds a production secret (srmp_…); fakemerchant serves demo data and needs a sandbox secret (srmps_…)',
      ])
      assert.equal(p.stderr().includes('do_not_echo'), false)
      assert.equal(p.stdout(), '')
    })
  }
})
