// MCP requests written out by hand, for the tests that need the raw HTTP exchange (status, headers, bytes, timing, a
// half-sent body) rather than what an SDK client makes of it.

/** A 2026-07-28 tools/call, as the SDK v2 client sends it: the headers (without Content-Length) and the body. */
export function modernToolCall(
  token: string,
  id: number | string,
  name: string,
  args: Record<string, unknown>,
): { headers: Record<string, string>; body: string } {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name,
      arguments: args,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  })
  return {
    body,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      // The 2026-07-28 SDK refuses a tools/call whose body and Mcp-Method/Mcp-Name headers disagree (400).
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
  }
}

/** A 2025-06-18 initialize, the start of a 2025-era session: its answer carries the Mcp-Session-Id. */
export function legacyInitialize(url: string, token: string, id: number): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    }),
  })
}
