// quenchz behind a real authorization server: oidc-provider in-process on 127.0.0.1 (dynamic registration, PKCE,
// resource indicators, JWT access tokens), quenchz as its own process in --jwks-url mode, and the official SDK v2
// and v1 clients running their OWN OAuth flow — 401, protected-resource metadata, authorization-server metadata,
// dynamic registration, authorization code + PKCE + resource, token — with no scope and no token set by hand, as
// three users. Then the same on two replicas sharing Redis behind a round-robin proxy.
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/client'
import { probeRedis, type RedisProbe } from '@tollgate/test-support'
import { type AuthorizationServer, startAuthorizationServer } from './support/authorization-server.ts'
import { type CliProcess, startCliProcess } from './support/cli-process.ts'
import { type AnyClient, firstText } from './support/clients.ts'
import { connectWithOAuth, InMemoryAuthProvider, type OAuthClientPath } from './support/oauth-clients.ts'
import { HISTORY_ZIP, NO_HISTORY } from './support/shared.ts'

const ELSEWHERE = 'https://elsewhere.invalid/mcp'
const USERS: ReadonlyArray<[string, OAuthClientPath]> = [
  ['alice', 'v2-modern'],
  ['bob', 'v1'],
  ['carol', 'v2-legacy'],
]
const WINDOW = { currency: 'USD', start: '2026-03-30', end: '2026-04-10' }
/** The access-token lifetime of the client registered as this name (the expired-token check). */
const SHORT_LIVED = 'short-lived-client'

const scratch = mkdtempSync(join(tmpdir(), 'quenchz-oidc-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

/** quenchz's --jwks-cooldown here, seconds: a key unknown inside it is refused at once, so the rotation waits it out. */
const JWKS_COOLDOWN_SECONDS = 1

/** quenchz on the frozen budget clock (the reserves are counted exactly), in the scratch folder. */
const startQuenchzProcess = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliProcess> =>
  startCliProcess(['--budget-clock', 'frozen', '--jwks-cooldown', String(JWKS_COOLDOWN_SECONDS), ...args], scratch, env)

/** A round-robin HTTP proxy: what a load balancer in front of replicas does, one request to each in turn. */
async function roundRobin(port: number, targets: number[]): Promise<Server> {
  let next = 0
  const proxy = createServer((req, res) => {
    const target = targets[next++ % targets.length] as number
    const upstream = request(
      { host: '127.0.0.1', port: target, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502)
      res.end()
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve))
  return proxy
}

/**
 * Waits until `holds()` (a condition on what quenchz has logged): a log line travels through the process's stderr,
 * which is not ordered with the HTTP answer, so it may arrive a moment after the answer it records.
 */
async function untilLogged(holds: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (holds()) return
    await sleep(10)
  }
  assert.fail(`quenchz never logged ${what}`)
}

/** Token refusals quenchz logged other than "no token yet" (the 401 every OAuth flow begins with). */
const refusals = (logs: Array<Record<string, unknown>>) =>
  logs.filter((l) => l.msg === 'token refused' && l.reason !== 'ERR_GATE_TOKEN_MISSING').map((l) => l.reason)

const calls = (logs: Array<Record<string, unknown>>, sub: string) =>
  logs.filter((l) => (l.msg === 'call' || l.msg === 'call refused') && l.sub === sub)

/** A token for another resource, obtained by the SDK's own OAuth functions with `resource` set to it. */
async function tokenFor(as: AuthorizationServer, user: string, resource: string): Promise<string> {
  const metadata = await discoverAuthorizationServerMetadata(as.issuer)
  if (metadata === undefined) throw new Error('the authorization server publishes no metadata')
  const auth = new InMemoryAuthProvider(as, user)
  const clientInformation = await registerClient(as.issuer, { metadata, clientMetadata: auth.clientMetadata as never })
  const { authorizationUrl, codeVerifier } = await startAuthorization(as.issuer, {
    metadata,
    clientInformation,
    redirectUrl: auth.redirectUrl,
    scope: 'rates:read',
    state: randomUUID(),
    resource,
  })
  const callback = await as.authorizeAs(user, authorizationUrl)
  const tokens = await exchangeAuthorization(as.issuer, {
    metadata,
    clientInformation,
    authorizationCode: callback.searchParams.get('code') as string,
    iss: callback.searchParams.get('iss') as string,
    codeVerifier,
    redirectUri: auth.redirectUrl,
    resource: new URL(resource),
  })
  return tokens.access_token
}

const initialize = (url: string, token?: string) =>
  fetch(url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  })

const jwtPayload = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>
const jwtKid = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()) as { kid?: string }).kid

/**
 * The whole suite, against quenchz at `url` (one process or a proxy in front of two) whose logs are `logs()`.
 * `start` brings up quenchz for a given authorization server.
 */
function suite(
  name: string,
  replicas: number,
  /** The budget quenchz was started with: calls per caller's own reserve, and in the shared pool. */
  budget: { reserve: number; pool: number },
  start: (
    as: AuthorizationServer,
  ) => Promise<{ url: string; logs: () => Array<Record<string, unknown>>; stop(): Promise<void> }>,
  skip: string | undefined,
): void {
  describe(name, { skip }, () => {
    let as: AuthorizationServer
    let quenchz: Awaited<ReturnType<typeof start>>
    const clients = new Map<string, { client: AnyClient; auth: InMemoryAuthProvider }>()
    // Every tools/call answered to the test's clients; each is one call log line once it has arrived.
    let answered = 0
    const counted = (client: AnyClient): AnyClient => ({
      ...client,
      callTool: async (name, args) => {
        const result = await client.callTool(name, args)
        answered++
        return result
      },
    })
    const allLogged = () =>
      untilLogged(
        () => quenchz.logs().filter((l) => l.msg === 'call' || l.msg === 'call refused').length >= answered,
        `a line for each of the ${answered} calls answered`,
      )
    before(async () => {
      as = await startAuthorizationServer({
        resources: { [ELSEWHERE]: 'rates:read' },
        users: ['alice', 'bob', 'carol', 'dave'],
        accessTokenTtl: (clientName) => (clientName === SHORT_LIVED ? 2 : 900),
      })
      quenchz = await start(as)
    })
    after(async () => {
      for (const { client } of clients.values()) await client.close().catch(() => {})
      await quenchz?.stop()
      await as?.close()
    })

    test('the metadata and every 401 challenge name rates:read, the scope a client must ask for', async () => {
      const metadataUrl = new URL(quenchz.url)
      metadataUrl.pathname = `/.well-known/oauth-protected-resource${metadataUrl.pathname}`
      const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>
      assert.deepEqual(metadata.scopes_supported, ['rates:read'])
      assert.deepEqual(metadata.authorization_servers, [as.issuer])
      const refused = await initialize(quenchz.url)
      assert.equal(refused.status, 401)
      assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer .*, scope="rates:read", resource_metadata="/)
      await refused.text()
    })

    for (const [user, path] of USERS) {
      test(`${user}, through the ${path} client's own OAuth flow with no scope or token set by hand, is admitted`, async () => {
        const auth = new InMemoryAuthProvider(as, user)
        const client = counted(await connectWithOAuth(path, quenchz.url, auth))
        clients.set(user, { client, auth })
        // The SDK chose the scope from quenchz's challenge and named quenchz as the resource; nobody typed either.
        assert.equal(auth.authorizationUrls.length, 1)
        const asked = auth.authorizationUrls[0] as URL
        assert.equal(asked.searchParams.get('scope'), 'rates:read')
        assert.equal(asked.searchParams.get('resource'), quenchz.url)
        assert.equal(asked.searchParams.get('code_challenge_method'), 'S256')
        const token = jwtPayload(auth.accessToken as string)
        assert.equal(token.aud, quenchz.url)
        assert.equal(token.sub, user)
        assert.equal(token.iss, as.issuer)
        assert.equal(token.scope, 'rates:read')

        const names = (await client.listTools()).tools.map((t) => t.name).sort()
        assert.ok(names.includes('rates.window') && !names.includes('series.catalogue'), names.join(' '))
      })
    }

    for (const [user] of USERS) {
      test(`${user} gets rates with a certificate, charged to its own sub`, async () => {
        const { client } = clients.get(user) as { client: AnyClient }
        const result = await client.callTool('rates.window', WINDOW)
        assert.equal(result.isError ?? false, false, firstText(result))
        const answer = result.structuredContent as { observations: unknown[]; coverage: Record<string, unknown> }
        assert.equal(answer.observations.length, 8)
        assert.equal(answer.coverage.delivered_observations, 8)
        assert.equal(answer.coverage.source, 'ECB statistics.')
        await allLogged()
        const served = calls(quenchz.logs(), user).filter((l) => l.outcome === 'served')
        assert.equal(served.length, 1, `${user}'s call is logged as served under its own sub`)
      })
    }

    test("each user is charged its own reserve: one user's calls never spend another's", async () => {
      // With the budget clock frozen a reserve only goes down, so the logged values order themselves, whichever
      // replica logged them.
      const reserves = (user: string) =>
        calls(quenchz.logs(), user).map((l) => (l.left as { reserve?: unknown } | null)?.reserve)
      await allLogged()
      const full = USERS.map(([user]) => Math.max(...(reserves(user) as number[])))
      for (const [user] of USERS)
        assert.ok(
          reserves(user).every((r) => typeof r === 'number'),
          `${user} has a reserve of its own`,
        )
      assert.equal(new Set(full).size, 1, `each first call left the same reserve: ${JSON.stringify(full)}`)
      const alice = clients.get('alice')?.client as AnyClient
      for (let i = 0; i < 3; i++)
        assert.equal((await alice.callTool('calendar.why', { day: '2026-04-03' })).isError ?? false, false)
      const bob = clients.get('bob')?.client as AnyClient
      await bob.callTool('calendar.why', { day: '2026-04-03' })
      await allLogged()
      const left = (user: string) => Math.min(...(reserves(user) as number[]))
      assert.equal(left('alice'), (full[0] as number) - 3, "alice's reserve went down by her own three calls")
      assert.equal(left('bob'), (full[0] as number) - 1, "bob's by his one call only")
      assert.equal(left('carol'), full[0], "carol's not at all")
      for (const l of calls(quenchz.logs(), 'alice')) assert.equal(l.charged, 'reserve')
    })

    test('a token for another resource is refused with 401, and so is an expired one', async () => {
      const before = refusals(quenchz.logs()).length
      const elsewhere = await tokenFor(as, 'alice', ELSEWHERE)
      assert.equal(jwtPayload(elsewhere).aud, ELSEWHERE)
      const another = await initialize(quenchz.url, elsewhere)
      assert.equal(another.status, 401)
      assert.match(another.headers.get('www-authenticate') ?? '', /^Bearer /)
      await another.text()

      const auth = new InMemoryAuthProvider(as, 'dave', SHORT_LIVED)
      const client = await connectWithOAuth('v2-modern', quenchz.url, auth).catch(() => undefined)
      await client?.close()
      const token = auth.accessToken as string
      const exp = jwtPayload(token).exp as number
      assert.ok(exp - (jwtPayload(token).iat as number) <= 2)
      await sleep(Math.max(0, exp * 1000 - Date.now()) + 1100)
      const expired = await initialize(quenchz.url, token)
      assert.equal(expired.status, 401)
      await expired.text()
      await untilLogged(() => refusals(quenchz.logs()).length >= before + 2, 'the two refusals')
      assert.deepEqual(refusals(quenchz.logs()).slice(before), ['ERR_GATE_AUDIENCE', 'ERR_GATE_TOKEN_EXPIRED'])
    })

    test('a key rotation in the middle refuses nothing: the new key on its first use, the old while published', async () => {
      const refusedBefore = refusals(quenchz.logs()).length
      const loginsBefore = as.authorizationRequests
      const fetchesBefore = as.jwksFetches
      const oldKid = as.signingKid
      // The issuer signs with its new key the moment it publishes it. quenchz refuses a key it does not hold while
      // its JWKS may not be fetched again (--jwks-cooldown after the last fetch) rather than hold the request; once
      // the cooldown has passed, the new key's first use makes the fetch and is accepted.
      await sleep(Math.max(0, as.lastJwksFetchAtMs + JWKS_COOLDOWN_SECONDS * 1000 + 50 - Date.now()))
      const newKid = as.rotate()
      // A new login is signed with the new key, which quenchz has never fetched.
      const auth = new InMemoryAuthProvider(as, 'dave')
      const dave = counted(await connectWithOAuth('v1', quenchz.url, auth))
      clients.set('dave', { client: dave, auth })
      assert.equal(jwtKid(auth.accessToken as string), newKid)
      assert.ok((await dave.listTools()).tools.some((t) => t.name === 'rates.window'))
      // The three users' tokens, signed with the old key, keep working.
      for (const [user] of USERS) {
        const { client, auth: theirs } = clients.get(user) as { client: AnyClient; auth: InMemoryAuthProvider }
        assert.equal(jwtKid(theirs.accessToken as string), oldKid)
        assert.ok(
          (await client.listTools()).tools.some((t) => t.name === 'rates.window'),
          user,
        )
      }
      await allLogged()
      assert.deepEqual(refusals(quenchz.logs()).slice(refusedBefore), [], 'no token was refused')
      // Nobody was sent back to log in: the one new authorization request is dave's.
      assert.equal(as.authorizationRequests, loginsBefore + 1)
      // The new kid cost one JWKS fetch per replica that met it, no more.
      const fetched = as.jwksFetches - fetchesBefore
      assert.ok(fetched >= 1 && fetched <= replicas, `${fetched} JWKS fetches for the rotation`)
    })

    test('a greedy user empties only the shared pool: the other two still get exactly their own reserve', async () => {
      const drain = async (user: string): Promise<number> => {
        const client = clients.get(user)?.client as AnyClient
        for (let served = 0; served < 1000; served++) {
          const result = await client.callTool('calendar.why', { day: '2026-04-03' })
          if (result.isError === true) return served
        }
        throw new Error(`${user}: 1000 calls were all served; calls are free`)
      }
      // The budget clock is frozen: what is left only goes down, so the least logged value is the latest.
      const leastReserve = (user: string) =>
        Math.min(...calls(quenchz.logs(), user).map((l) => (l.left as { reserve: number }).reserve))
      await allLogged()
      await drain('alice')
      await allLogged()
      const refused = calls(quenchz.logs(), 'alice').filter((l) => l.outcome === 'over-budget')
      assert.equal(refused.length, 1)
      assert.deepEqual(refused[0]?.left, { reserve: 0, spare: 0 }, 'alice spent her reserve and the whole pool')
      // The others only ever spent their own reserves, so every unit of the pool went to alice: she was served
      // exactly her reserve plus the pool, across every replica, and not one call more.
      const aliceServed = calls(quenchz.logs(), 'alice').filter((l) => l.outcome === 'served')
      assert.equal(aliceServed.length, budget.reserve + budget.pool)
      assert.equal(aliceServed.filter((l) => l.charged === 'reserve').length, budget.reserve)
      for (const user of ['bob', 'carol']) {
        const owed = leastReserve(user)
        assert.ok(owed > 0, `${user} still holds a reserve`)
        assert.equal(await drain(user), owed, `${user} is served exactly what is left of its own reserve`)
        await allLogged()
        const served = calls(quenchz.logs(), user).filter((l) => l.outcome === 'served')
        assert.ok(
          served.every((l) => l.charged === 'reserve'),
          `${user} was only ever charged its own reserve`,
        )
      }
    })
  })
}

// The defaults (no budget flag): 60 calls of each caller's own and a pool of 240.
suite(
  'one quenchz behind oidc-provider',
  1,
  { reserve: 60, pool: 240 },
  async (as) => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}/mcp`
    as.addResource(url, 'rates:read series:list')
    const q = await startQuenchzProcess([
      ...['--port', String(port), '--public-url', url, '--jwks-url', as.jwksUrl, '--issuer', as.issuer],
      ...['--source', 'history', '--history', HISTORY_ZIP],
    ])
    return { url, logs: () => q.logs, stop: () => q.stop() }
  },
  NO_HISTORY,
)

const redis: RedisProbe = await probeRedis('quenchz-oidc-test')
after(() => redis.cleanup())
// A policy file: the operator's way to set the budget (overrides per caller too; none here).
const POLICY = join(scratch, 'budget-policy.json')
writeFileSync(POLICY, JSON.stringify({ reserve: 20, pool: 50, windowSeconds: 3600 }))
suite(
  'two quenchz replicas sharing Redis behind oidc-provider',
  2,
  { reserve: 20, pool: 50 },
  async (as) => {
    const [port, a, b] = [await freePort(), await freePort(), await freePort()]
    const url = `http://127.0.0.1:${port}/mcp`
    as.addResource(url, 'rates:read series:list')
    const env = { MCP_SESSION_KEY: randomBytes(32).toString('hex') }
    const common = [
      ...['--public-url', url, '--allowed-host', `127.0.0.1:${port}`],
      ...['--jwks-url', as.jwksUrl, '--issuer', as.issuer, '--source', 'history', '--history', HISTORY_ZIP],
      ...['--budget-redis', 'redis://127.0.0.1:6379', '--budget-prefix', redis.prefix, '--budget-policy', POLICY],
    ]
    const replicas = [
      await startQuenchzProcess(['--port', String(a), ...common], env),
      await startQuenchzProcess(['--port', String(b), ...common], env),
    ]
    const proxy = await roundRobin(port, [a, b])
    return {
      url,
      logs: () => replicas.flatMap((r) => r.logs),
      async stop() {
        proxy.closeAllConnections()
        await new Promise<void>((resolve) => proxy.close(() => resolve()))
        for (const r of replicas) await r.stop()
      },
    }
  },
  NO_HISTORY ?? redis.skip,
)
