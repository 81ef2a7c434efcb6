// The audience check: single-string aud equal to this resource, trusted issuer and key, required claims, expiry.
import assert from 'node:assert/strict'
import type { webcrypto } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { createAudience, createInProcessIssuer, type InProcessIssuer } from '../src/index.ts'

const ISSUER = 'https://issuer.quenchz.invalid'
const RESOURCE = 'https://quenchz.invalid/mcp'
const ELSEWHERE = 'https://elsewhere.invalid/mcp'

let issuer: InProcessIssuer
before(async () => {
  issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
})

const audienceFor = (i: InProcessIssuer, algorithms: Array<'RS256' | 'ES256'> = ['RS256']) =>
  createAudience({ resource: RESOURCE, issuer: ISSUER, keys: i.keySource(), algorithms })
const bearer = (t: string) => `Bearer ${t}`

describe('audience admits', () => {
  test('a token minted for this resource, with its sub, scopes split on whitespace, and the resource', async () => {
    const token = await issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read', 'series:list'] })
    const admission = await audienceFor(issuer).admit(bearer(token))
    assert.equal(admission.subject, 'agent-alpha')
    assert.deepEqual(admission.scopes, ['rates:read', 'series:list'])
    assert.equal(admission.resource, RESOURCE)
    assert.equal(typeof admission.expiresAt, 'number')
  })

  test('a token with no scopes at all (the gate never enforces scope)', async () => {
    const admission = await audienceFor(issuer).admit(bearer(await issuer.mint({ subject: 'agent-alpha' })))
    assert.deepEqual(admission.scopes, [])
  })

  test('an ES256 token when ES256 is accepted', async () => {
    const es = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE, algorithm: 'ES256' })
    const admission = await audienceFor(es, ['RS256', 'ES256']).admit(bearer(await es.mint({ subject: 'agent-beta' })))
    assert.equal(admission.subject, 'agent-beta')
  })
})

describe('audience refuses, each with its own code and no token in the message', () => {
  const cases: Array<[string, () => Promise<string | undefined>, string]> = [
    ['no Authorization header', async () => undefined, 'ERR_GATE_TOKEN_MISSING'],
    ['a non-bearer scheme', async () => 'Basic YWxhZGRpbjpvcGVuc2VzYW1l', 'ERR_GATE_TOKEN_INVALID'],
    [
      'a token for another resource',
      async () => bearer(await issuer.mint({ subject: 'agent-alpha', audience: ELSEWHERE })),
      'ERR_GATE_AUDIENCE',
    ],
    [
      'a token for two resources, one of them this one',
      async () => bearer(await issuer.mint({ subject: 'agent-alpha', audience: [RESOURCE, ELSEWHERE] })),
      'ERR_GATE_AUDIENCE_LIST',
    ],
    [
      'a list naming only this resource',
      async () => bearer(await issuer.mint({ subject: 'agent-alpha', audience: [RESOURCE] })),
      'ERR_GATE_AUDIENCE_LIST',
    ],
    [
      'a token with no aud',
      async () => bearer(await issuer.mint({ subject: 'agent-alpha', audience: null })),
      'ERR_GATE_CLAIM_MISSING',
    ],
    [
      'a token with no iat',
      async () => bearer(await issuer.mint({ subject: 'agent-alpha', omitIssuedAt: true })),
      'ERR_GATE_CLAIM_MISSING',
    ],
    [
      'an expired token',
      async () => bearer(await issuer.mint({ subject: 'agent-alpha', lifetimeSeconds: -1 })),
      'ERR_GATE_TOKEN_EXPIRED',
    ],
    [
      'a token from an untrusted issuer',
      async () => bearer(await issuer.mint({ subject: 'agent-alpha', issuer: 'https://evil.invalid' })),
      'ERR_GATE_ISSUER',
    ],
    [
      'a token signed by another valid key',
      async () => {
        const other = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
        return bearer(await other.mint({ subject: 'agent-alpha' }))
      },
      'ERR_GATE_TOKEN_INVALID',
    ],
    [
      'an unsigned (alg none) token',
      async () => {
        const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url')
        const now = Math.floor(Date.now() / 1000)
        return bearer(
          `${enc({ alg: 'none', typ: 'JWT' })}.${enc({ iss: ISSUER, sub: 'agent-alpha', aud: RESOURCE, iat: now, exp: now + 60 })}.`,
        )
      },
      'ERR_GATE_TOKEN_INVALID',
    ],
    ['garbage', async () => bearer('not.a.jwt'), 'ERR_GATE_TOKEN_INVALID'],
  ]
  for (const [name, header, code] of cases) {
    test(name, async () => {
      const h = await header()
      await assert.rejects(audienceFor(issuer).admit(h), (error: Error & { code: string }) => {
        assert.equal(error.code, code)
        assert.equal(error.name, 'TokenRefused')
        if (h !== undefined) assert.ok(!error.message.includes(h.slice(7)), 'the token is never in the message')
        return true
      })
    })
  }

  test('an ES256 token when only RS256 is accepted', async () => {
    const es = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE, algorithm: 'ES256' })
    await assert.rejects(audienceFor(es, ['RS256']).admit(bearer(await es.mint({ subject: 'a' }))), {
      code: 'ERR_GATE_TOKEN_INVALID',
    })
  })

  test('expiry is judged on the injected clock, with no leeway', async () => {
    const t0 = 1_800_000_000
    const minted = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE, now: () => t0 })
    const token = bearer(await minted.mint({ subject: 'agent-alpha', lifetimeSeconds: 900 }))
    const at = (s: number) =>
      createAudience({ resource: RESOURCE, issuer: ISSUER, keys: minted.keySource(), now: () => new Date(s * 1000) })
    assert.equal((await at(t0 + 899).admit(token)).subject, 'agent-alpha')
    await assert.rejects(at(t0 + 900).admit(token), { code: 'ERR_GATE_TOKEN_EXPIRED' })
  })
})

describe('audience with a real issuer by JWKS URL (loopback JWKS server)', () => {
  let jwksIssuer: InProcessIssuer
  let url: string
  let served = 0
  const server = createServer(async (_req, res) => {
    served++
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(await jwksIssuer.jwks()))
  })
  before(async () => {
    jwksIssuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  })
  after(async () => {
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
  })

  test('admits a token signed by a key the JWKS publishes and refuses one it does not', async () => {
    const audience = createAudience({ resource: RESOURCE, issuer: ISSUER, keys: { kind: 'jwks', url } })
    assert.equal(
      (await audience.admit(bearer(await jwksIssuer.mint({ subject: 'agent-alpha' })))).subject,
      'agent-alpha',
    )
    assert.ok(served >= 1)
    await assert.rejects(audience.admit(bearer(await issuer.mint({ subject: 'agent-alpha' }))), {
      code: 'ERR_GATE_TOKEN_INVALID',
    })
  })

  test('still refuses a list aud through JWKS', async () => {
    const audience = createAudience({ resource: RESOURCE, issuer: ISSUER, keys: { kind: 'jwks', url } })
    const token = await jwksIssuer.mint({ subject: 'agent-alpha', audience: [RESOURCE, ELSEWHERE] })
    await assert.rejects(audience.admit(bearer(token)), { code: 'ERR_GATE_AUDIENCE_LIST' })
  })

  test("an unreachable JWKS is the server's fault (KeysUnavailable), not the caller's bad token", async () => {
    const dead = createServer()
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r))
    const deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}/jwks.json`
    await new Promise<void>((r) => dead.close(() => r()))
    const audience = createAudience({
      resource: RESOURCE,
      issuer: ISSUER,
      keys: { kind: 'jwks', url: deadUrl, timeoutMs: 1000 },
    })
    await assert.rejects(audience.admit(bearer(await jwksIssuer.mint({ subject: 'agent-alpha' }))), {
      code: 'ERR_GATE_KEYS_UNAVAILABLE',
    })
  })
})

describe('claims the in-process issuer always sets, missing or malformed in a token signed by a trusted key', () => {
  // A key of the test's own, so claims can be left out that the in-process issuer never omits.
  let keys: Awaited<ReturnType<typeof generateKeyPair>>
  before(async () => {
    keys = await generateKeyPair('RS256')
  })
  const now = Math.floor(Date.now() / 1000)
  const full = { iss: ISSUER, sub: 'agent-alpha', aud: RESOURCE, iat: now, exp: now + 600, scope: 'rates:read' }
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'RS256' }).sign(keys.privateKey)
  const admit = async (claims: Record<string, unknown>) =>
    createAudience({ resource: RESOURCE, issuer: ISSUER, keys: { kind: 'key', publicKey: keys.publicKey } }).admit(
      bearer(await sign(claims)),
    )
  const without = (name: keyof typeof full) => Object.fromEntries(Object.entries(full).filter(([k]) => k !== name))

  test('the complete token is admitted (the baseline the cases below differ from)', async () => {
    assert.deepEqual((await admit(full)).scopes, ['rates:read'])
  })
  for (const name of ['sub', 'exp', 'iss'] as const) {
    test(`no ${name}: refused as a missing claim`, async () => {
      await assert.rejects(admit(without(name)), { code: 'ERR_GATE_CLAIM_MISSING' })
    })
  }
  test('an empty sub: refused as a missing claim (no caller id to charge)', async () => {
    await assert.rejects(admit({ ...full, sub: '' }), { code: 'ERR_GATE_CLAIM_MISSING' })
  })
  test('an empty aud list: refused', async () => {
    await assert.rejects(admit({ ...full, aud: [] }), { name: 'TokenRefused' })
  })
  test('no scope claim: admitted with no scopes (scope is judged at dispatch, never here)', async () => {
    assert.deepEqual((await admit(without('scope'))).scopes, [])
  })
  test('Okta: no scope, an scp array: its entries are the scopes', async () => {
    assert.deepEqual((await admit({ ...without('scope'), scp: ['rates:read', 'series:list'] })).scopes, [
      'rates:read',
      'series:list',
    ])
  })
  test('Entra ID: no scope, an scp string: split on whitespace', async () => {
    assert.deepEqual((await admit({ ...without('scope'), scp: 'rates:read  series:list' })).scopes, [
      'rates:read',
      'series:list',
    ])
  })
  test('scope and scp both present: scope alone counts, even when scp grants more', async () => {
    assert.deepEqual((await admit({ ...full, scp: ['rates:read', 'series:list'] })).scopes, ['rates:read'])
    assert.deepEqual((await admit({ ...full, scope: '', scp: ['series:list'] })).scopes, [])
  })
  test('a malformed scope claim grants nothing, and scp is not read in its place', async () => {
    assert.deepEqual((await admit({ ...full, scope: 7, scp: ['rates:read'] })).scopes, [])
    assert.deepEqual((await admit({ ...without('scope'), scp: ['rates:read', 7] })).scopes, [])
    assert.deepEqual((await admit({ ...without('scope'), scp: { 'rates:read': true } })).scopes, [])
  })
  test('an HS256 token keyed with the public key (algorithm confusion): refused', async () => {
    const secret = new TextEncoder().encode(JSON.stringify(await exportJWK(keys.publicKey)))
    const token = await new SignJWT(full).setProtectedHeader({ alg: 'HS256' }).sign(secret)
    await assert.rejects(
      createAudience({ resource: RESOURCE, issuer: ISSUER, keys: { kind: 'key', publicKey: keys.publicKey } }).admit(
        bearer(token),
      ),
      { code: 'ERR_GATE_TOKEN_INVALID' },
    )
  })
})

describe('recently admitted tokens are remembered, never past their expiry', () => {
  test('the same token is verified once; a remembered token that expires is refused as expired', async () => {
    const t0 = 1_800_000_000
    const minted = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE, now: () => t0 })
    const token = await minted.mint({ subject: 'agent-alpha', lifetimeSeconds: 10 })
    let verifications = 0
    let clock = t0 + 1
    const publicKey = (minted.keySource() as { publicKey: webcrypto.CryptoKey }).publicKey
    const audience = createAudience({
      resource: RESOURCE,
      issuer: ISSUER,
      keys: {
        kind: 'resolver',
        getKey: async () => {
          verifications++
          return publicKey
        },
      },
      now: () => new Date(clock * 1000),
    })
    for (let i = 0; i < 5; i++) assert.equal((await audience.admit(bearer(token))).subject, 'agent-alpha')
    assert.equal(verifications, 1)
    clock = t0 + 10 // exp <= now: expired, with no leeway, although it is remembered
    await assert.rejects(audience.admit(bearer(token)), { code: 'ERR_GATE_TOKEN_EXPIRED' })
  })

  test('after verifiedCacheMs the token is verified again; with verifiedCacheSize 0 every time', async () => {
    let verifications = 0
    const publicKey = (issuer.keySource() as { publicKey: webcrypto.CryptoKey }).publicKey
    let ms = Date.now()
    const make = (options: { verifiedCacheSize?: number }) =>
      createAudience({
        resource: RESOURCE,
        issuer: ISSUER,
        keys: {
          kind: 'resolver',
          getKey: async () => {
            verifications++
            return publicKey
          },
        },
        now: () => new Date(ms),
        verifiedCacheMs: 60_000,
        ...options,
      })
    const token = await issuer.mint({ subject: 'agent-beta' })
    const remembering = make({})
    await remembering.admit(bearer(token))
    ms += 60_001
    await remembering.admit(bearer(token))
    assert.equal(verifications, 2)
    verifications = 0
    const forgetful = make({ verifiedCacheSize: 0 })
    await forgetful.admit(bearer(token))
    await forgetful.admit(bearer(token))
    assert.equal(verifications, 2)
    assert.throws(() => make({ verifiedCacheSize: -1 }), { name: 'RangeError', message: /verifiedCacheSize/ })
  })

  test('a refused token is never remembered as admitted', async () => {
    const other = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
    const token = await other.mint({ subject: 'agent-alpha' })
    const audience = audienceFor(issuer)
    for (let i = 0; i < 2; i++) await assert.rejects(audience.admit(bearer(token)), { code: 'ERR_GATE_TOKEN_INVALID' })
  })
})
