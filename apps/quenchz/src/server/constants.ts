// The digest's §2 names: identities, callers and budget figures the server and its interop manifest share.

/** MCP server name and version reported in `initialize`, `server/discover` and result `_meta`. */
export const SERVER_INFO = { name: 'quenchz', version: '0.1.0' } as const
/** The trusted issuer (`iss`). `.invalid` (RFC 2606): it can never resolve. */
export const ISSUER = 'https://issuer.quenchz.invalid'
/** This resource: the only `aud` admitted, and only as a single string. */
export const RESOURCE = 'https://quenchz.invalid/mcp'
/** "Somebody else's" resource, for the bad tokens in the manifest. */
export const ELSEWHERE = 'https://elsewhere.invalid/mcp'
/** The callers holding reserves: exactly these two. */
export const CALLERS = { greedy: 'agent-alpha', quiet: 'agent-beta' } as const
/** Budget: capacity 60 units, refill 60 per second, half split into per-caller reserves. */
export const BUDGET = { capacity: 60, refillPerSecond: 60, reserveFraction: 0.5 } as const
/** Default interop port. */
export const DEFAULT_PORT = 8931
/**
 * Scopes advertised to clients of a real issuer (metadata `scopes_supported`, challenge `scope`): `rates:read` only.
 * Every advertised scope is public knowledge, and `series:list` is the concealed catalogue's grant, so it is not
 * listed: a caller meant to hold it gets it from the authorization server's own policy.
 */
export const DEFAULT_ADVERTISED_SCOPES: readonly string[] = ['rates:read']
