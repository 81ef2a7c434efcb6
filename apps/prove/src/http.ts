// Raw HTTP probes for the audience checks: only the status code and the challenge count, never "it threw".

export interface Probe {
  status: number
  challenge: string | null
  body: string
}

const LEGACY_INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'quenchz-prove', version: '0.1.0' } },
})

const MODERN_DISCOVER = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'quenchz-prove', version: '0.1.0' },
    },
  },
})

async function post(url: string, token: string, body: string, extra: Record<string, string>): Promise<Probe> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      authorization: `Bearer ${token}`,
      ...extra,
    },
    body,
    signal: AbortSignal.timeout(15_000),
  })
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body: await res.text() }
}

/** The 2025-era `initialize` POST the digest's audience proofs send. */
export const probeInitialize = (url: string, token: string) => post(url, token, LEGACY_INITIALIZE, {})

/** A 2026-07-28 `server/discover` POST with the required headers and `_meta` envelope. */
export const probeDiscover = (url: string, token: string) =>
  post(url, token, MODERN_DISCOVER, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' })

/** The JSON-RPC message in a body that may be plain JSON or SSE (`data: ` lines). */
export function jsonRpcOf(body: string): { result?: unknown; error?: unknown } | undefined {
  const text = body.trimStart().startsWith('{')
    ? body
    : body
        .split('\n')
        .find((l) => l.startsWith('data: '))
        ?.slice(6)
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Names a status for a failure detail; a 5xx is never a refusal. */
export function describeStatus(p: Probe): string {
  if (p.status >= 500) return `status ${p.status}: the server errored; that is not a refusal`
  return `status ${p.status}`
}
