// Connects one of the three official client paths: SDK v1, SDK v2 in legacy mode, SDK v2 on 2026-07-28.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

export type ClientPath = 'v1' | 'v2-legacy' | 'v2-modern'
export const CLIENT_PATHS: ClientPath[] = ['v1', 'v2-legacy', 'v2-modern']

export interface ToolResult {
  isError?: boolean
  content: Array<{ type: string; text?: string }>
  structuredContent?: Record<string, unknown>
}

export interface AnyClient {
  era: string | undefined
  server: { name: string; version: string } | undefined
  instructions: string | undefined
  listTools(): Promise<{ tools: Array<{ name: string; outputSchema?: unknown; description?: string | undefined }> }>
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>
  close(): Promise<void>
}

/** `fetch`, when given, is the transport's (e.g. to watch the HTTP answers the client gets). */
export async function connect(
  path: ClientPath,
  url: string,
  token: string,
  options: { fetch?: typeof fetch } = {},
): Promise<AnyClient> {
  const requestInit = { headers: { authorization: `Bearer ${token}` } }
  const transportOptions = { requestInit, ...(options.fetch !== undefined ? { fetch: options.fetch } : {}) }
  if (path === 'v1') {
    const client = new V1Client({ name: 'quenchz-test-v1', version: '1.0.0' })
    await client.connect(new V1Transport(new URL(url), transportOptions))
    return wrapV1(client)
  }
  const client = new Client(
    { name: 'quenchz-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: path === 'v2-modern' ? 'auto' : 'legacy' } },
  )
  await client.connect(new StreamableHTTPClientTransport(new URL(url), transportOptions))
  return wrapV2(client)
}

/** The common face of a connected v1 client. */
export function wrapV1(client: V1Client): AnyClient {
  return {
    era: 'legacy',
    server: client.getServerVersion(),
    instructions: client.getInstructions(),
    listTools: () => client.listTools(),
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  }
}

/** The common face of a connected v2 client. */
export function wrapV2(client: Client): AnyClient {
  return {
    era: client.getProtocolEra(),
    server: client.getServerVersion(),
    instructions: client.getInstructions(),
    listTools: () => client.listTools(),
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  }
}

export function firstText(r: ToolResult): string {
  const first = r.content[0]
  if (first === undefined || first.type !== 'text' || typeof first.text !== 'string') throw new Error('no text content')
  return first.text
}
