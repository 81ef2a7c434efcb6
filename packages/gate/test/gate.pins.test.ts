// Pins of the gate's observable surface, as literals (never imported expectations).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  allowListFor,
  bearerChallenge,
  hostGuard,
  loopbackAllowList,
  NO_SUCH_TOOL,
  OVER_BUDGET,
  resourceIdentity,
  UNAUTHORIZED_BODY,
} from '../src/index.ts'

test('the no-such-tool refusal is these 48 bytes', () => {
  assert.equal(
    Buffer.from(NO_SUCH_TOOL, 'utf8').toString('hex'),
    '6e6f20746f6f6c2062792074686174206e616d6520697320617661696c61626c6520746f20746869732063616c6c6572',
  )
})

test('the over-budget refusal is this sentence', () => {
  assert.equal(OVER_BUDGET, 'this caller has spent its share of the upstream budget')
  assert.equal(Buffer.byteLength(OVER_BUDGET), 54)
})

test('the metadata address is derived from the resource per RFC 9728 §3.1', () => {
  assert.deepEqual(resourceIdentity('https://quenchz.invalid/mcp'), {
    resource: 'https://quenchz.invalid/mcp',
    endpointPath: '/mcp',
    metadataPath: '/.well-known/oauth-protected-resource/mcp',
    metadataUrl: 'https://quenchz.invalid/.well-known/oauth-protected-resource/mcp',
  })
  assert.equal(resourceIdentity('https://a.invalid/').metadataPath, '/.well-known/oauth-protected-resource')
  assert.throws(() => resourceIdentity('not a url'), { code: 'ERR_GATE_CONFIG' })
  assert.throws(() => resourceIdentity('https://a.invalid/mcp?x=1'), { code: 'ERR_GATE_CONFIG' })
})

test('the challenge and 401 body', () => {
  assert.equal(
    bearerChallenge(resourceIdentity('https://quenchz.invalid/mcp')),
    'Bearer error="invalid_token", error_description="Authentication required", resource_metadata="https://quenchz.invalid/.well-known/oauth-protected-resource/mcp"',
  )
  assert.equal(UNAUTHORIZED_BODY, '{"error":"invalid_token","error_description":"Authentication required"}')
})

test('the loopback allow-list admits 127.0.0.1 and localhost with or without a port, and nothing else', () => {
  const guard = hostGuard(loopbackAllowList())
  for (const host of ['127.0.0.1', '127.0.0.1:8931', 'localhost', 'LOCALHOST:1', '[::1]:8931'])
    assert.deepEqual(guard({ host }), { ok: true }, host)
  for (const host of [
    'somewhere-else.invalid',
    '127.0.0.1.evil.invalid',
    '127.0.0.1:',
    '127.0.0.1:x',
    'localhost:99999x',
  ]) {
    assert.deepEqual(guard({ host }), { ok: false, status: 421, body: 'Invalid Host header' }, host)
  }
  assert.deepEqual(guard({}), { ok: false, status: 421, body: 'Invalid Host header' })
  assert.deepEqual(guard({ host: 'localhost', origin: 'http://localhost:3000' }), { ok: true })
  assert.deepEqual(guard({ host: 'localhost', origin: 'https://localhost' }), {
    ok: false,
    status: 403,
    body: 'Invalid Origin header',
  })
  assert.deepEqual(guard({ host: 'localhost', origin: 'http://evil.invalid' }), {
    ok: false,
    status: 403,
    body: 'Invalid Origin header',
  })
})

test('a bind-host allow-list is [host, host:*] and an empty list is refused at construction', () => {
  assert.deepEqual(allowListFor('0.0.0.0'), {
    hosts: ['0.0.0.0', '0.0.0.0:*'],
    origins: ['http://0.0.0.0', 'http://0.0.0.0:*'],
  })
  assert.throws(() => hostGuard({ hosts: [], origins: [] }), { code: 'ERR_GATE_CONFIG' })
  // An IPv6 bind host arrives bracketed in the Host header.
  assert.deepEqual(allowListFor('::1').hosts, ['[::1]', '[::1]:*'])
  assert.deepEqual(allowListFor('[::1]').hosts, ['[::1]', '[::1]:*'])
  const v6 = hostGuard(allowListFor('::1'))
  assert.deepEqual(v6({ host: '[::1]:8931', origin: 'http://[::1]:8931' }), { ok: true })
  assert.equal(v6({ host: '::1:8931' }).ok, false)
})
