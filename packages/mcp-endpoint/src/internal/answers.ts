import type { ServerResponse } from 'node:http'

/** Writes one JSON-RPC error answer. `message` is always a fixed text, never request input. */
export function jsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  id: unknown = null,
  extra: Record<string, string> = {},
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: safeId(id) })
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...extra })
  res.end(body)
}

/** Echo an id only when it is a valid JSON-RPC id (string or number); anything else is answered with null. */
function safeId(id: unknown): string | number | null {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null
}

/** Writes a fixed body with a status. */
export function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) })
  res.end(body)
}
