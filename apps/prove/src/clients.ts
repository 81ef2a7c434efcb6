// The two official SDK clients, behind one small interface. Nothing here comes from the server's code.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'

export interface ToolResult {
  isError?: boolean
  content: Array<{ type: string; text?: string }>
  structuredContent?: Record<string, unknown>
}

export interface Session {
  era: string | undefined
  listTools(): Promise<string[]>
  call(name: string, args: Record<string, unknown>): Promise<ToolResult>
  close(): Promise<void>
}

export type Flavour = 'v1' | 'v2-legacy' | 'v2-modern'

/** Opens a session with the token in the Authorization header. */
export async function openSession(flavour: Flavour, url: string, token: string): Promise<Session> {
  const requestInit = { headers: { authorization: `Bearer ${token}` } }
  if (flavour === 'v1') {
    const client = new V1Client({ name: 'quenchz-prove', version: '0.1.0' })
    await client.connect(new V1Transport(new URL(url), { requestInit }))
    return {
      era: 'legacy',
      listTools: async () => (await client.listTools()).tools.map((t) => t.name),
      call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
      close: () => client.close(),
    }
  }
  const client = new Client(
    { name: 'quenchz-prove', version: '0.1.0' },
    { versionNegotiation: { mode: flavour === 'v2-modern' ? 'auto' : 'legacy' } },
  )
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit }))
  return {
    era: client.getProtocolEra(),
    listTools: async () => (await client.listTools()).tools.map((t) => t.name),
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  }
}

/** The first content item's text, or undefined. */
export function firstText(r: ToolResult): string | undefined {
  const first = r.content[0]
  return first?.type === 'text' ? first.text : undefined
}
