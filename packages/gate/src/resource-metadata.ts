import type { IncomingMessage, ServerResponse } from 'node:http'
import { GateConfigError } from './errors.js'

/** The RFC 9728 protected-resource metadata document the gate serves, unauthenticated. */
export interface ProtectedResourceMetadata {
  resource: string
  authorization_servers: string[]
  bearer_methods_supported: string[]
  /** Only when scopes are advertised (see {@link advertisedScopeList}); absent otherwise. */
  scopes_supported?: string[]
}

/** The parsed resource identifier plus the two addresses derived from it (RFC 9728 §3.1). */
export interface ResourceIdentity {
  /** The resource identifier exactly as configured, e.g. `https://quenchz.invalid/mcp`; the only accepted `aud`. */
  resource: string
  /** Path part of the resource, e.g. `/mcp`: the MCP endpoint is served here. */
  endpointPath: string
  /** Path at which the metadata is served, e.g. `/.well-known/oauth-protected-resource/mcp`. */
  metadataPath: string
  /** Absolute metadata URL named in every challenge, e.g. `https://quenchz.invalid/.well-known/oauth-protected-resource/mcp`. */
  metadataUrl: string
}

/**
 * Derives the endpoint path and metadata address from a resource identifier. The well-known segment is
 * inserted between the host and the path, as RFC 9728 §3.1 prescribes. Throws GateConfigError for an identifier
 * that is not an absolute http(s) URL or carries a query or fragment.
 */
export function resourceIdentity(resource: string): ResourceIdentity {
  let url: URL
  try {
    url = new URL(resource)
  } catch {
    throw new GateConfigError('the resource identifier must be an absolute URL')
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '') {
    throw new GateConfigError('the resource identifier must be an http(s) URL without query or fragment')
  }
  const endpointPath = url.pathname === '' ? '/' : url.pathname
  const suffix = endpointPath === '/' ? '' : endpointPath
  const metadataPath = `/.well-known/oauth-protected-resource${suffix}`
  return { resource, endpointPath, metadataPath, metadataUrl: `${url.origin}${metadataPath}` }
}

/**
 * Builds the metadata document: the resource and its authorization servers, and `scopes_supported` only when
 * scopes are advertised (none by default: a listed scope tells every reader that it exists).
 */
export function protectedResourceMetadata(
  resource: string,
  authorizationServers: readonly string[],
  advertisedScopes: readonly string[] = [],
): ProtectedResourceMetadata {
  if (authorizationServers.length === 0) throw new GateConfigError('at least one authorization server must be named')
  const scopes = advertisedScopeList(advertisedScopes)
  return {
    resource,
    authorization_servers: [...authorizationServers],
    bearer_methods_supported: ['header'],
    ...(scopes.length > 0 ? { scopes_supported: scopes } : {}),
  }
}

/**
 * The one `WWW-Authenticate` value sent with every 401, whatever the reason (the reason is never told). With
 * advertised scopes it carries them as RFC 6750 §3 `scope`, the first thing an MCP client's scope selection reads;
 * the value is the same for every caller and every request, so it tells nothing about what a caller was granted.
 */
export function bearerChallenge(identity: ResourceIdentity, advertisedScopes: readonly string[] = []): string {
  const scopes = advertisedScopeList(advertisedScopes)
  const scope = scopes.length > 0 ? `, scope="${scopes.join(' ')}"` : ''
  return `Bearer error="invalid_token", error_description="Authentication required"${scope}, resource_metadata="${identity.metadataUrl}"`
}

/**
 * Checks scopes to advertise: each an RFC 6749 §3.3 scope-token (printable ASCII without space, `"` or `\`, so it
 * can sit in a quoted challenge parameter), no duplicates. Throws GateConfigError otherwise.
 */
export function advertisedScopeList(scopes: readonly string[]): string[] {
  for (const scope of scopes) {
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(scope))
      throw new GateConfigError('an advertised scope must be a scope-token: printable ASCII without space, " or \\')
  }
  if (new Set(scopes).size !== scopes.length) throw new GateConfigError('an advertised scope is listed twice')
  return [...scopes]
}

/** The JSON body sent with every 401. */
export const UNAUTHORIZED_BODY = '{"error":"invalid_token","error_description":"Authentication required"}'

/** The unauthenticated RFC 9728 metadata document, and 404 for anything else; the Host/Origin guard ran first. */
export function metadataRoute(
  identity: ResourceIdentity,
  authorizationServers: readonly string[],
  advertisedScopes: readonly string[] | undefined,
) {
  const metadata = JSON.stringify(protectedResourceMetadata(identity.resource, authorizationServers, advertisedScopes))
  return async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    req.resume()
    if (path === identity.metadataPath) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { allow: 'GET, HEAD' }, '')
      return send(res, 200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' }, metadata)
    }
    return send(res, 404, { 'content-type': 'text/plain; charset=utf-8' }, 'Not Found')
  }
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}
