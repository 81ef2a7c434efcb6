// The official SDK clients doing their own OAuth flow against quenchz: v2 (`@modelcontextprotocol/client`) and v1
// (`@modelcontextprotocol/sdk`), each with an in-memory auth provider of the kind an application writes. Nothing in
// it sets a scope or a token: the SDK discovers, registers, chooses the scope and exchanges the code; the only thing
// the provider does beyond storing what the SDK hands it is play the user's browser (AuthorizationServer.authorizeAs).
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client'
import { UnauthorizedError as V1UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { AuthorizationServer } from './authorization-server.ts'
import { type AnyClient, wrapV1, wrapV2 } from './clients.ts'

export type OAuthClientPath = 'v1' | 'v2-modern' | 'v2-legacy'

const REDIRECT = 'http://127.0.0.1/callback'

/** What an application's auth provider keeps: the registration, the tokens, the PKCE verifier, discovery. */
export class InMemoryAuthProvider {
  /** Every authorization URL the SDK sent the "browser" to (its `scope` parameter is what the SDK chose). */
  readonly authorizationUrls: URL[] = []
  #callback: URL | undefined
  #client: Record<string, unknown> | undefined
  #tokens: Record<string, unknown> | undefined
  #verifier = ''
  #discovery: unknown

  constructor(
    private readonly server: AuthorizationServer,
    readonly user: string,
    private readonly clientName = 'quenchz-oauth-test',
  ) {}

  get redirectUrl(): string {
    return REDIRECT
  }

  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    }
  }

  /** The access token the SDK obtained (for raw requests in the test; never logged). */
  get accessToken(): string | undefined {
    return this.#tokens?.access_token as string | undefined
  }

  /** The callback the authorization server redirected to: `code`, `state`, `iss`. */
  get callback(): URL {
    if (this.#callback === undefined) throw new Error('no authorization was completed')
    return this.#callback
  }

  clientInformation() {
    return this.#client as never
  }
  saveClientInformation(info: Record<string, unknown>): void {
    this.#client = info
  }
  tokens() {
    return this.#tokens as never
  }
  saveTokens(tokens: Record<string, unknown>): void {
    this.#tokens = tokens
  }
  async redirectToAuthorization(url: URL): Promise<void> {
    this.authorizationUrls.push(new URL(url))
    this.#callback = await this.server.authorizeAs(this.user, url)
  }
  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier
  }
  codeVerifier(): string {
    return this.#verifier
  }
  saveDiscoveryState(state: unknown): void {
    this.#discovery = state
  }
  discoveryState() {
    return this.#discovery as never
  }
}

/**
 * Connects one official client with `auth` as its auth provider: the first connect meets the 401 and the SDK runs
 * its flow up to the redirect (which `auth` completes as the user), then finishAuth exchanges the code and a new
 * connection carries the token. Exactly how an application drives either SDK.
 */
export async function connectWithOAuth(
  path: OAuthClientPath,
  url: string,
  auth: InMemoryAuthProvider,
): Promise<AnyClient> {
  if (path === 'v1') {
    const transport = () => new V1Transport(new URL(url), { authProvider: auth as never })
    const first = transport()
    try {
      return wrapV1(await connectV1(first))
    } catch (error) {
      if (!(error instanceof V1UnauthorizedError)) throw error
    }
    await first.finishAuth(auth.callback.searchParams.get('code') as string)
    return wrapV1(await connectV1(transport()))
  }
  const mode = path === 'v2-modern' ? 'auto' : 'legacy'
  const transport = () => new StreamableHTTPClientTransport(new URL(url), { authProvider: auth as never })
  const first = transport()
  try {
    return wrapV2(await connectV2(first, mode))
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error
  }
  await first.finishAuth(auth.callback.searchParams)
  return wrapV2(await connectV2(transport(), mode))
}

async function connectV1(transport: V1Transport): Promise<V1Client> {
  const client = new V1Client({ name: 'quenchz-oauth-v1', version: '1.0.0' })
  await client.connect(transport)
  return client
}

async function connectV2(transport: StreamableHTTPClientTransport, mode: 'auto' | 'legacy'): Promise<Client> {
  const client = new Client({ name: 'quenchz-oauth-v2', version: '1.0.0' }, { versionNegotiation: { mode } })
  await client.connect(transport)
  return client
}
