// No demo data in production: startProvider with a production secret and no billing port refuses to start (coded,
// naming the fix), and fakemerchant refuses a production secret with one line; the sandbox keeps its demo ledger.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { DemoInProductionError } from '../src/index.js'
import { runFakemerchant } from './fakemerchant-process.js'
import { demoBilling, startTestProvider } from './helpers.js'
import { rest } from './rest-helpers.js'

const PRODUCTION = 'srmp_live_do_not_echo_0123456789abcdef'

describe('startProvider in production', () => {
  test('without billing: refused with ERR_PROVIDER_DEMO_IN_PRODUCTION naming `billing`, never the secret', async () => {
    for (const options of [{ secrets: [PRODUCTION] }, { secrets: [PRODUCTION], environment: 'production' as const }]) {
      await assert.rejects(startTestProvider(options), (e: unknown) => {
        assert.ok(e instanceof DemoInProductionError)
        assert.equal(e.code, 'ERR_PROVIDER_DEMO_IN_PRODUCTION')
        assert.match(e.message, /pass `billing`, your BillingPort/)
        assert.equal(e.message.includes('do_not_echo'), false)
        return true
      })
    }
  })

  test('with a billing port it serves production; the sandbox still defaults to the demo ledger', async () => {
    const demo = await demoBilling()
    const live = await startTestProvider({ secrets: [PRODUCTION], billing: demo.billing })
    const sandbox = await startTestProvider()
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
