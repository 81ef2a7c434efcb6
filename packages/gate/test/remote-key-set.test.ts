// Key rotation against a real JWKS server on 127.0.0.1 that the test rotates: a key published after the last fetch
// is accepted on its first use, a flood of forged kids costs the issuer a bounded number of fetches (counted at the
// server), and a removed key stops being accepted once the keys that held it are older than maxAgeMs.
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { generateKeyPair, type JWK, SignJWT } from 'jose'
import { type Audience, createAudience, createInProcessIssuer, type InProcessIssuer } from '../src/index.ts'

const ISSUER = 'https://issuer.quenchz.invalid'
const RESOURCE = 'https://quenchz.invalid/mcp'
const bearer = (token: string) => `Bearer ${token}`

/** A JWKS endpoint whose published keys the test sets, counting every fetch and when it arrived. */
class RotatingJwks {
  published: JWK[] = []
  status = 200
  readonly fetchedAt: number[] = []
  #server: Server | undefined
  url = ''

  async start(): Promise<void> {
    this.#server = createServer((_req, res) => {
      this.fetchedAt.push(Date.now())
      if (this.status !== 200) {
        res.writeHead(this.status).end()
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: this.published }))
    })
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/jwks.json`
  }

  get fetches(): number {
    return this.fetchedAt.length
  }

  async publish(...issuers: InProcessIssuer[]): Promise<void> {
    this.published = (await Promise.all(issuers.map((i) => i.jwks()))).flatMap((set) => set.keys)
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections()
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()))
  }
}

describe('a JWKS that rotates', () => {
  const jwks = new RotatingJwks()
  let first: InProcessIssuer
  let second: InProcessIssuer
  before(async () => {
    await jwks.start()
    first = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
    second = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
  })
  after(() => jwks.close())

  const audienceWith = (keys: { cooldownMs: number; maxAgeMs: number }): Audience =>
    createAudience({ resource: RESOURCE, issuer: ISSUER, keys: { kind: 'jwks', url: jwks.url, ...keys } })

  test('a key published after the last fetch is refused inside the cooldown without a fetch, and accepted on its first use once the cooldown has passed', async () => {
    await jwks.publish(first)
    const cooldownMs = 300
    const audience = audienceWith({ cooldownMs, maxAgeMs: 600_000 })
    const before = jwks.fetches
    assert.equal((await audience.admit(bearer(await first.mint({ subject: 'alice' })))).subject, 'alice')
    assert.equal(jwks.fetches, before + 1)
    // The issuer publishes its new key and signs with it at once, inside quenchz's cooldown: the set may not be
    // fetched again yet, so the token is refused now (as any bad token), not held for the rest of the cooldown.
    await jwks.publish(second, first)
    const early = await second.mint({ subject: 'bob' })
    await assert.rejects(audience.admit(bearer(early)), { code: 'ERR_GATE_TOKEN_INVALID' })
    assert.equal(jwks.fetches, before + 1, 'no fetch inside the cooldown')
    await sleep(cooldownMs + 20)
    assert.equal((await audience.admit(bearer(early))).subject, 'bob')
    assert.equal(jwks.fetches, before + 2, 'one more fetch, for the unknown kid')
    // Both keys now verify without any further fetch.
    assert.equal((await audience.admit(bearer(await first.mint({ subject: 'carol' })))).subject, 'carol')
    assert.equal((await audience.admit(bearer(await second.mint({ subject: 'dave' })))).subject, 'dave')
    assert.equal(jwks.fetches, before + 2)
  })

  test('many callers presenting the new key at once, once the cooldown has passed, share one fetch', async () => {
    await jwks.publish(first)
    const cooldownMs = 300
    const audience = audienceWith({ cooldownMs, maxAgeMs: 600_000 })
    await audience.admit(bearer(await first.mint({ subject: 'alice' })))
    const before = jwks.fetches
    await jwks.publish(second, first)
    const tokens = await Promise.all(Array.from({ length: 50 }, (_, i) => second.mint({ subject: `user-${i}` })))
    await sleep(cooldownMs + 20)
    const admitted = await Promise.all(tokens.map((t) => audience.admit(bearer(t))))
    assert.deepEqual(
      admitted.map((a) => a.subject),
      tokens.map((_, i) => `user-${i}`),
    )
    assert.equal(jwks.fetches, before + 1)
  })

  test('a flood of forged kids inside the cooldown is refused without holding a request or asking the issuer', async () => {
    await jwks.publish(first)
    // A cooldown far longer than the flood: were a forged token held until the set may be fetched again, the flood
    // would only settle after it, with a fetch counted at the server; refused at once, it settles with none.
    const cooldownMs = 10_000
    const audience = audienceWith({ cooldownMs, maxAgeMs: 600_000 })
    await audience.admit(bearer(await first.mint({ subject: 'alice' })))
    const fetchesBefore = jwks.fetches
    const forger = await generateKeyPair('ES256')
    const forged = () =>
      new SignJWT({ scope: 'rates:read' })
        .setProtectedHeader({ alg: 'ES256', kid: randomUUID() })
        .setIssuer(ISSUER)
        .setSubject('mallory')
        .setAudience(RESOURCE)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(forger.privateKey)
    for (let wave = 0; wave < 5; wave++) {
      const tokens = await Promise.all(Array.from({ length: 100 }, forged))
      const results = await Promise.allSettled(tokens.map((t) => audience.admit(bearer(t))))
      for (const r of results) {
        assert.equal(r.status, 'rejected')
        assert.equal((r.reason as { code: string }).code, 'ERR_GATE_TOKEN_INVALID')
      }
      assert.equal(jwks.fetches, fetchesBefore, `wave ${wave}: the issuer was not asked inside the cooldown`)
    }
    // The genuine key still verifies, from the held set.
    assert.equal((await audience.admit(bearer(await first.mint({ subject: 'alice' })))).subject, 'alice')
    assert.equal(jwks.fetches, fetchesBefore)
  })

  test('with a short cooldown, a flood mixed with a rotated-in key: one fetch per cooldown, the new key accepted on its first use after it', async () => {
    await jwks.publish(first)
    // Every token is minted before the clock matters: minting hundreds of ES256 tokens on a busy machine took longer
    // than a short cooldown, so a flood meant to fall inside one spilled past it and earned a fetch.
    const cooldownMs = 1_000
    const forger = await generateKeyPair('ES256')
    const forged = () =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'ES256', kid: randomUUID() })
        .setIssuer(ISSUER)
        .setSubject('mallory')
        .setAudience(RESOURCE)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(forger.privateKey)
    const floods = await Promise.all(Array.from({ length: 4 }, () => Promise.all(Array.from({ length: 100 }, forged))))
    const alice = await first.mint({ subject: 'alice' })
    const genuine = await second.mint({ subject: 'bob' })
    const audience = audienceWith({ cooldownMs, maxAgeMs: 600_000 })
    await audience.admit(bearer(alice))
    await jwks.publish(second, first)
    const flood = async (tokens: readonly string[]) => {
      const results = await Promise.allSettled(tokens.map((t) => audience.admit(bearer(t))))
      assert.ok(
        results.every(
          (r) => r.status === 'rejected' && (r.reason as { code: string }).code === 'ERR_GATE_TOKEN_INVALID',
        ),
      )
    }
    const [early, during1, during2, late] = floods as [string[], string[], string[], string[]]
    const fetchesBefore = jwks.fetches
    await flood(early)
    assert.equal(jwks.fetches, fetchesBefore, 'inside the cooldown: no fetch')
    await sleep(cooldownMs + 20)
    // The cooldown has passed: forged tokens and the first token of the new key arrive together. One fetch serves
    // them all: the forged are refused, the new key is accepted on its first use.
    const [, admitted] = await Promise.all([flood(during1), audience.admit(bearer(genuine)), flood(during2)])
    assert.equal(admitted.subject, 'bob')
    assert.equal(jwks.fetches, fetchesBefore + 1, 'one fetch for the whole cooldown')
    await flood(late)
    assert.equal(jwks.fetches, fetchesBefore + 1)
  })

  test('a flood of forged kids costs at most one fetch per cooldown, and every forged token is refused', async () => {
    await jwks.publish(first)
    const cooldownMs = 400
    const audience = audienceWith({ cooldownMs, maxAgeMs: 600_000 })
    await audience.admit(bearer(await first.mint({ subject: 'alice' })))
    const forger = await generateKeyPair('ES256')
    const forged = () =>
      new SignJWT({ scope: 'rates:read' })
        .setProtectedHeader({ alg: 'ES256', kid: randomUUID() })
        .setIssuer(ISSUER)
        .setSubject('mallory')
        .setAudience(RESOURCE)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(forger.privateKey)
    // Once the cooldown has passed since that fetch, the first unknown kid is worth one.
    await sleep(cooldownMs + 20)
    const floodStart = jwks.fetches
    const startedMs = Date.now()
    // Five waves of 100 forged tokens each, every wave sent at once and the next only when it is answered.
    for (let wave = 0; wave < 5; wave++) {
      const tokens = await Promise.all(Array.from({ length: 100 }, forged))
      const results = await Promise.allSettled(tokens.map((t) => audience.admit(bearer(t))))
      for (const r of results) {
        assert.equal(r.status, 'rejected')
        assert.equal((r.reason as { code: string }).code, 'ERR_GATE_TOKEN_INVALID')
      }
    }
    const elapsedMs = Date.now() - startedMs
    const floodFetches = jwks.fetchedAt.slice(floodStart)
    assert.ok(floodFetches.length >= 1, 'an unknown kid is worth a fetch')
    assert.ok(
      floodFetches.length <= Math.floor(elapsedMs / cooldownMs) + 1,
      `${floodFetches.length} fetches for 500 forged tokens in ${elapsedMs} ms`,
    )
    // No two fetches closer than the cooldown (a little slack for the trip to the server).
    const all = jwks.fetchedAt.slice(floodStart - 1)
    for (let i = 1; i < all.length; i++) {
      assert.ok((all[i] as number) - (all[i - 1] as number) >= cooldownMs - 150, `fetch ${i} came too soon`)
    }
    // The genuine key still verifies.
    assert.equal((await audience.admit(bearer(await first.mint({ subject: 'alice' })))).subject, 'alice')
  })

  test('a removed key is refused once the keys that held it are older than maxAgeMs, remembered tokens included', async () => {
    await jwks.publish(first, second)
    const maxAgeMs = 2000
    const audience = audienceWith({ cooldownMs: 0, maxAgeMs })
    const old = await first.mint({ subject: 'alice' })
    assert.equal((await audience.admit(bearer(old))).subject, 'alice')
    // The issuer withdraws the first key. Within the bound the held set still has it (and the token is remembered).
    await jwks.publish(second)
    assert.equal((await audience.admit(bearer(old))).subject, 'alice')
    await sleep(maxAgeMs + 50)
    await assert.rejects(audience.admit(bearer(old)), { code: 'ERR_GATE_TOKEN_INVALID' })
    await assert.rejects(audience.admit(bearer(await first.mint({ subject: 'bob' }))), {
      code: 'ERR_GATE_TOKEN_INVALID',
    })
    assert.equal((await audience.admit(bearer(await second.mint({ subject: 'carol' })))).subject, 'carol')
  })

  test('a JWKS that stops answering is the server fault once the keys are stale, and is used again when it returns', async () => {
    await jwks.publish(first)
    const audience = audienceWith({ cooldownMs: 200, maxAgeMs: 300 })
    assert.equal((await audience.admit(bearer(await first.mint({ subject: 'alice' })))).subject, 'alice')
    jwks.status = 500
    await sleep(350)
    const fresh = await first.mint({ subject: 'bob' })
    await assert.rejects(audience.admit(bearer(fresh)), { code: 'ERR_GATE_KEYS_UNAVAILABLE' })
    // Right after a failed fetch, tokens are refused as unavailable at once rather than each waiting for a fetch.
    const fetchesAfterFailure = jwks.fetches
    await assert.rejects(audience.admit(bearer(fresh)), { code: 'ERR_GATE_KEYS_UNAVAILABLE' })
    assert.equal(jwks.fetches, fetchesAfterFailure)
    jwks.status = 200
    await sleep(250)
    assert.equal((await audience.admit(bearer(fresh))).subject, 'bob')
  })
})
