// PlatformClient refuses option misuse at construction, naming the option (issue 11 §7).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PlatformClient, type PlatformClientOptions } from '../src/index.js'
import { startResponder } from './support/responder.js'

const BASE = { baseUrl: 'http://127.0.0.1:1/mcp', secret: 'srmps_options_test_0123456789' }
const make = (extra: Record<string, unknown>) => new PlatformClient({ ...BASE, ...extra } as PlatformClientOptions)

test('a numeric option of the wrong type is a TypeError, one out of range a RangeError, each naming the option', () => {
  for (const name of ['timeoutMs', 'maxBodyBytes', 'maxAttempts', 'retryDelayMs']) {
    assert.throws(() => make({ [name]: '5' }), { name: 'TypeError', message: new RegExp(`^${name} `) })
    assert.throws(() => make({ [name]: 1.5 }), { name: 'TypeError', message: new RegExp(`^${name} `) })
    assert.throws(() => make({ [name]: Number.NaN }), { name: 'TypeError', message: new RegExp(`^${name} `) })
    assert.throws(() => make({ [name]: -1 }), { name: 'RangeError', message: new RegExp(`^${name} `) })
    assert.throws(() => make({ [name]: 2 ** 31 }), { name: 'RangeError', message: new RegExp(`^${name} `) })
  }
  assert.throws(() => make({ maxAttempts: 0 }), { name: 'RangeError', message: /^maxAttempts / })
  assert.throws(() => make({ timeoutMs: 0 }), { name: 'RangeError', message: /^timeoutMs / })
  assert.doesNotThrow(() => make({ retryDelayMs: 0 }))
})

test('enumerations and other options are checked by name', () => {
  assert.throws(() => make({ secret: '' }), { name: 'TypeError', message: /^secret is required/ })
  assert.throws(() => make({ baseUrl: 5 }), { name: 'TypeError', message: /^baseUrl is required/ })
  assert.throws(() => make({ transport: 'grpc' }), { name: 'TypeError', message: /^transport / })
  assert.throws(() => make({ era: '2025' }), { name: 'TypeError', message: /^era / })
  assert.throws(() => make({ allowPrivate: 'yes' }), { name: 'TypeError', message: /^allowPrivate / })
  assert.throws(() => make({ now: 5 }), { name: 'TypeError', message: /^now / })
  assert.throws(() => make({ eraCache: {} }), { name: 'TypeError', message: /^eraCache / })
  assert.throws(() => make({ bearerToken: 5 }), { name: 'TypeError', message: /^bearerToken / })
})

test('an option given as undefined keeps its default', async () => {
  // A server that never answers: with timeoutMs: undefined replacing the default, the timer would fire at once
  // (setTimeout(undefined) is 1 ms) and report a timeout; with the default it is still waiting when we stop it.
  const s = await startResponder(() => ({ drop: true }))
  try {
    const c = make({
      baseUrl: s.url.replace('/mcp', ''),
      transport: 'rest',
      allowPrivate: true,
      maxAttempts: undefined,
      retryDelayMs: undefined,
      timeoutMs: undefined,
      era: undefined,
      transport_: undefined,
    })
    // maxAttempts undefined → the default 3 attempts (a dropped connection is retried).
    await assert.rejects(c.callTool('sr_describe', {}, { correlationId: 'c', channel: 'ticket' }), {
      code: 'ERR_PLATFORM_NETWORK',
    })
    assert.equal(s.requests.length, 3)
    assert.equal(c.transport, 'rest')
  } finally {
    await s.close()
  }
})
