// A real authorization server for the tests: panva's oidc-provider, in-process on 127.0.0.1, configured the way
// quenchz needs one (README "Running quenchz behind your authorization server"): open dynamic client registration,
// authorization code with PKCE, RFC 8707 resource indicators issuing JWT access tokens whose `aud` is the resource,
// and a login + consent that the test completes over plain HTTP (no browser). All its keys are in its keystore from
// the start, but the JWKS publishes only those up to the signing one: a rotation publishes the next key and signs
// with it at once, as an issuer rotating keys does.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import Provider, { errors as oidcErrors } from 'oidc-provider'

/** One signing key of the server: its private JWK (in the provider's keystore) and its public half. */
interface SigningKey {
  kid: string
  privateJwk: JWK
  publicJwk: JWK
}

async function signingKey(kid: string): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true })
  const base = { kid, alg: 'RS256', use: 'sig' }
  return {
    kid,
    privateJwk: { ...(await exportJWK(privateKey)), ...base },
    publicJwk: { ...(await exportJWK(publicKey)), ...base },
  }
}

export interface AuthorizationServer {
  /** `http://127.0.0.1:<port>`: the issuer (`iss`) and the base of every endpoint. */
  readonly issuer: string
  /** The JWKS address the metadata names (`jwks_uri`). */
  readonly jwksUrl: string
  /** GET requests the JWKS endpoint has answered. */
  readonly jwksFetches: number
  /** When (epoch ms) the JWKS endpoint was last asked; 0 before the first request. */
  readonly lastJwksFetchAtMs: number
  /** Authorization requests received (each one is a login the test drove). */
  readonly authorizationRequests: number
  /** The kid access tokens are signed with now. */
  readonly signingKid: string
  /** Publishes the next key beside the current one and signs with it from now on (a rotation). Returns its kid. */
  rotate(): string
  /** Issues JWT access tokens for this resource too, granting at most `scope`. */
  addResource(indicator: string, scope: string): void
  /**
   * Completes an authorization request as `user`, as a browser would: follows the authorization endpoint's
   * redirects through login and consent (both answered by this test server) and resolves with the callback URL
   * that carries `code`, `state` and `iss`.
   */
  authorizeAs(user: string, authorizationUrl: URL): Promise<URL>
  close(): Promise<void>
}

export interface AuthorizationServerOptions {
  /** The resource servers it issues JWT access tokens for, each with the scopes it may grant. */
  resources: Record<string, string>
  /** Accounts that can log in. */
  users: readonly string[]
  /** Access token lifetime, seconds; per client name, for an expired-token check (default 900). */
  accessTokenTtl?: (clientName: string | undefined) => number
}

/** Starts oidc-provider on 127.0.0.1 port 0 with three signing keys (one published at first). */
export async function startAuthorizationServer(options: AuthorizationServerOptions): Promise<AuthorizationServer> {
  const resources: Record<string, string> = { ...options.resources }
  const keys = [await signingKey('key-1'), await signingKey('key-2'), await signingKey('key-3')]
  let signing = 0
  let jwksFetches = 0
  let lastJwksFetchAtMs = 0
  let authorizationRequests = 0
  const server: Server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const provider = new Provider(issuer, {
    // Every key is in the keystore from the start; which are published is the filter below, which kid signs is
    // getResourceServerInfo's.
    jwks: { keys: keys.map((k) => k.privateJwk) },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // The token request names the resource again; a code granted for one resource yields a token for it.
        useGrantedResource: async () => true,
        getResourceServerInfo: async (
          ctx: { oidc: { client?: { clientName?: string } } },
          resourceIndicator: string,
        ) => {
          const scope = resources[resourceIndicator]
          if (scope === undefined) throw new oidcErrors.InvalidTarget()
          const clientName = ctx.oidc.client?.clientName
          return {
            scope,
            audience: resourceIndicator,
            accessTokenTTL: options.accessTokenTtl?.(clientName) ?? 900,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256', kid: (keys[signing] as SigningKey).kid } },
          }
        },
      },
    },
    // Dynamic registration may name these scopes (the SDK registers with the scope it chose).
    scopes: ['openid', 'offline_access', 'rates:read', 'series:list'],
    pkce: { required: () => true },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx, sub) =>
      options.users.includes(sub) ? { accountId: sub, claims: async () => ({ sub }) } : undefined,
    clientBasedCORS: () => true,
    cookies: { keys: ['quenchz-test-cookie-key-not-a-secret'] },
  })
  const callback = provider.callback()

  // Login and consent, answered for the user the test names in the query (?user=…); consent grants what was asked.
  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const user = new URL(req.url ?? '/', issuer).searchParams.get('user') ?? ''
    const details = await provider.interactionDetails(req, res)
    let result: Record<string, unknown>
    if (details.prompt.name === 'login') {
      result = { login: { accountId: user } }
    } else {
      const grant =
        (details.grantId === undefined ? undefined : await provider.Grant.find(details.grantId)) ??
        new provider.Grant({
          accountId: details.session?.accountId as string,
          clientId: details.params.client_id as string,
        })
      const missing = details.prompt.details as {
        missingOIDCScope?: string[]
        missingResourceScopes?: Record<string, string[]>
      }
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
        grant.addResourceScope(indicator, scopes.join(' '))
      result = { consent: { grantId: await grant.save() } }
    }
    await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true })
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', issuer).pathname
    if (path === '/jwks') {
      jwksFetches++
      lastJwksFetchAtMs = Date.now()
      const body = JSON.stringify({ keys: keys.slice(0, signing + 1).map((k) => k.publicJwk) })
      res.writeHead(200, { 'content-type': 'application/json' }).end(body)
      return
    }
    if (path === '/auth') authorizationRequests++
    if (path.startsWith('/interaction/')) {
      interaction(req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500)
        res.end(String((error as Error).message))
      })
      return
    }
    callback(req, res)
  })

  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    get jwksFetches() {
      return jwksFetches
    },
    get lastJwksFetchAtMs() {
      return lastJwksFetchAtMs
    },
    get authorizationRequests() {
      return authorizationRequests
    },
    get signingKid() {
      return (keys[signing] as SigningKey).kid
    },
    rotate() {
      if (signing + 1 >= keys.length) throw new Error('no key left to rotate to')
      signing++
      return (keys[signing] as SigningKey).kid
    },
    addResource(indicator, scope) {
      resources[indicator] = scope
    },
    authorizeAs: (user, authorizationUrl) => followAsBrowser(issuer, user, authorizationUrl),
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** Follows redirects by hand with a cookie jar until one leaves the authorization server: that is the callback. */
async function followAsBrowser(issuer: string, user: string, start: URL): Promise<URL> {
  const jar = new Map<string, string>()
  let url = start
  for (let hop = 0; hop < 12; hop++) {
    if (url.origin !== issuer) return url
    if (url.pathname.startsWith('/interaction/')) url.searchParams.set('user', user)
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const response = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } })
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = (pair as string).indexOf('=')
      const name = (pair as string).slice(0, eq)
      const value = (pair as string).slice(eq + 1)
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') jar.delete(name)
      else jar.set(name, value)
    }
    const location = response.headers.get('location')
    const text = await response.text()
    if (location === null)
      throw new Error(`the authorization server answered ${response.status} without a redirect: ${text.slice(0, 300)}`)
    url = new URL(location, url)
  }
  throw new Error('too many redirects at the authorization server')
}
