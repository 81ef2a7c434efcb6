import assert from 'node:assert/strict'
import { after, test } from 'node:test'
import { checkBaseUrl, isPublicAddress, PlatformClient } from '../src/index.js'
import { type Responder, startResponder } from './support/responder.js'

const SECRET = 'srmps_wire_test_secret_0123456789'
const servers: Responder[] = []
after(async () => {
  for (const s of servers) await s.close()
})

test('non-public addresses are recognised, public ones are not', () => {
  for (const a of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:7f00:1',
    '::7f00:1',
  ]) {
    assert.equal(isPublicAddress(a), false, a)
  }
  for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
    assert.equal(isPublicAddress(a), true, a)
})

test('base URL rules: https on 443, no credentials, public addresses only', async () => {
  await assert.rejects(checkBaseUrl('http://8.8.8.8/mcp'), { code: 'ERR_PLATFORM_BASE_URL' })
  await assert.rejects(checkBaseUrl('https://8.8.8.8:8443/mcp'), { code: 'ERR_PLATFORM_BASE_URL' })
  await assert.rejects(checkBaseUrl('https://user:[email protected]/mcp'), { code: 'ERR_PLATFORM_BASE_URL' })
  await assert.rejects(checkBaseUrl('not a url'), { code: 'ERR_PLATFORM_BASE_URL' })
  await assert.rejects(checkBaseUrl('https://127.0.0.1/mcp'), { code: 'ERR_PLATFORM_PRIVATE_ADDRESS' })
  await assert.rejects(checkBaseUrl('https://[::1]/mcp'), { code: 'ERR_PLATFORM_PRIVATE_ADDRESS' })
  await assert.rejects(checkBaseUrl('https://localhost/mcp'), { code: 'ERR_PLATFORM_PRIVATE_ADDRESS' })
  assert.equal((await checkBaseUrl('https://8.8.8.8/mcp')).href, 'https://8.8.8.8/mcp')
})

test('allowPrivate permits plain http on loopback only', async () => {
  assert.equal((await checkBaseUrl('http://127.0.0.1:8080/mcp', { allowPrivate: true })).port, '8080')
  await assert.rejects(checkBaseUrl('http://10.0.0.1:8080/mcp', { allowPrivate: true }), {
    code: 'ERR_PLATFORM_BASE_URL',
  })
})

test('without allowPrivate a call to a loopback server sends nothing', async () => {
  const s = await startResponder(() => ({ status: 200, body: '{}' }))
  servers.push(s)
  const c = new PlatformClient({ baseUrl: s.url, secret: SECRET })
  await assert.rejects(c.callTool('sr_describe', {}, { correlationId: 'c', channel: 'ticket' }), {
    code: 'ERR_PLATFORM_BASE_URL',
  })
  assert.equal(s.requests.length, 0)
})

test('a redirect is refused and not followed', async () => {
  const target = await startResponder(() => ({ status: 200, body: '{}' }))
  servers.push(target)
  const s = await startResponder(() => ({ status: 307, headers: { location: target.url }, body: '' }))
  servers.push(s)
  const c = new PlatformClient({ baseUrl: s.url, secret: SECRET, allowPrivate: true, eraCache: new Map() })
  await assert.rejects(c.callTool('sr_describe', {}, { correlationId: 'c', channel: 'ticket' }), {
    code: 'ERR_PLATFORM_REDIRECT',
    status: 307,
  })
  assert.equal(target.requests.length, 0)
})

test('a missing secret is caller misuse (TypeError)', () => {
  assert.throws(() => new PlatformClient({ baseUrl: 'https://8.8.8.8/mcp', secret: '' }), TypeError)
})

test('edge headers that the protocol owns, or that are not valid headers, are refused at construction', () => {
  const base = { baseUrl: 'https://8.8.8.8/mcp', secret: SECRET }
  for (const name of [
    'Mcp-Param-Amount',
    'mcp-session-id',
    'Host',
    'Authorization',
    'X-SupportRoute-Signature',
    'Idempotency-Key',
    'Last-Event-ID',
  ])
    assert.throws(() => new PlatformClient({ ...base, edgeHeaders: { [name]: 'v' } }), TypeError, name)
  assert.throws(() => new PlatformClient({ ...base, edgeHeaders: { 'x-edge': 'a\r\nb: c' } }), TypeError)
  assert.throws(() => new PlatformClient({ ...base, bearerToken: 'tok\nx' }), TypeError)
  assert.ok(new PlatformClient({ ...base, edgeHeaders: { 'x-edge-key': 'edge-1' }, bearerToken: 'tok-1' }))
})
