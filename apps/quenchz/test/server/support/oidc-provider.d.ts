// The little of oidc-provider 9's API the authorization-server tests use (the package ships no types; DefinitelyTyped's
// lag its majors). Only what support/authorization-server.ts calls is declared.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http'

  interface OidcContext {
    oidc: { client?: { clientId: string; clientName?: string } }
  }
  interface InteractionDetails {
    uid: string
    prompt: { name: string; details: Record<string, unknown> }
    params: Record<string, unknown>
    session?: { accountId?: string }
    grantId?: string
  }
  interface Grant {
    addOIDCScope(scope: string): void
    addResourceScope(resource: string, scope: string): void
    save(): Promise<string>
  }
  interface GrantClass {
    new (properties: { accountId: string; clientId: string }): Grant
    find(id: string): Promise<Grant | undefined>
  }
  export interface Configuration {
    jwks?: { keys: unknown[] }
    features?: Record<string, unknown>
    scopes?: string[]
    pkce?: { required?: (ctx: OidcContext, client: unknown) => boolean }
    interactions?: { url?: (ctx: OidcContext, interaction: { uid: string }) => string }
    findAccount?: (
      ctx: OidcContext,
      sub: string,
    ) => Promise<{ accountId: string; claims: () => Promise<Record<string, unknown>> } | undefined>
    clientBasedCORS?: (ctx: OidcContext, origin: string, client: unknown) => boolean
    cookies?: { keys?: string[] }
  }
  export default class Provider {
    constructor(issuer: string, configuration?: Configuration)
    callback(): (req: IncomingMessage, res: ServerResponse) => void
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>
    Grant: GrantClass
  }
  export const errors: { InvalidTarget: new (description?: string) => Error }
}
