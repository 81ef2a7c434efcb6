// The official MCP clients of both eras, with the credentials each server requires, recording which replica
// answered each request (the balancer's X-Tollgate-Replica header).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { AjvJsonSchemaValidator as AjvV2 } from '@modelcontextprotocol/client/validators/ajv'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema as CallToolResultSchemaV1 } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator as AjvV1 } from '@modelcontextprotocol/sdk/validation/ajv-provider.js'
import { createContractAjv } from '@tollgate/contract'
import { signHeaders } from '@tollgate/signing'

/** 'v1': SDK v1's client (2025-11-25, sessions); 'v2': SDK v2's client negotiating 2026-07-28 (stateless). */
export type ClientEra = 'v1' | 'v2'

export type Credential = { kind: 'hmac'; secret: string } | { kind: 'bearer'; token: string }

export interface ToolResult {
  isError?: boolean
  content: { type: string; text?: string }[]
  structuredContent?: Record<string, unknown>
}

export interface RecordedRequest {
  method: string
  rpc: string | undefined
  status: number
  replica: string | null
}

export interface AnyClient {
  /** Every HTTP request of this client, in order, with the replica that answered it. */
  requests: RecordedRequest[]
  listTools(): Promise<{ name: string }[]>
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>
  /** Ends the session (DELETE for v1) and closes the client. */
  close(): Promise<void>
}

type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>

/** A fetch that adds the credential (signing the exact bytes for HMAC) and records each answer's replica. */
export function credentialFetch(credential: Credential, requests: RecordedRequest[]): FetchLike {
  return async (input, init = {}) => {
    const url = new URL(String(input))
    const method = (init.method ?? 'GET').toUpperCase()
    const body = typeof init.body === 'string' ? init.body : ''
    const headers = new Headers(init.headers)
    if (credential.kind === 'hmac') {
      const signed = signHeaders(credential.secret, {
        method,
        host: url.host,
        path: url.pathname,
        body: Buffer.from(body, 'utf8'),
      })
      for (const [k, v] of Object.entries(signed)) headers.set(k, v)
    } else {
      headers.set('authorization', `Bearer ${credential.token}`)
    }
    let rpc: string | undefined
    try {
      rpc = body === '' ? undefined : (JSON.parse(body) as { method?: string }).method
    } catch {
      rpc = undefined
    }
    const res = await fetch(url, { ...init, headers })
    requests.push({ method, rpc, status: res.status, replica: res.headers.get('x-tollgate-replica') })
    return res
  }
}

/** Connects an official client to `url`; `contract` loads the merchant-provider/v1 schemas (the provider's $refs). */
export async function connectClient(
  era: ClientEra,
  url: string,
  credential: Credential,
  contract = credential.kind === 'hmac',
): Promise<AnyClient> {
  const requests: RecordedRequest[] = []
  const fetchFn = credentialFetch(credential, requests)
  if (era === 'v1') {
    const client = new ClientV1(
      { name: 'tollgate-interop-v1', version: '0.1.0' },
      contract ? { jsonSchemaValidator: new AjvV1(createContractAjv() as never) } : {},
    )
    const transport = new TransportV1(new URL(url), { fetch: fetchFn })
    await client.connect(transport)
    return {
      requests,
      listTools: async () => (await client.listTools()).tools,
      callTool: async (name, args) => {
        try {
          return (await client.callTool({ name, arguments: args })) as ToolResult
        } catch (error) {
          // SDK v1 validates an isError result's structuredContent against the output schema and throws; re-read it.
          if (!(error instanceof Error) || !error.message.includes('output schema')) throw error
          return (await client.request(
            { method: 'tools/call', params: { name, arguments: args } },
            CallToolResultSchemaV1,
          )) as ToolResult
        }
      },
      close: async () => {
        await transport.terminateSession()
        await client.close()
      },
    }
  }
  const client = new Client(
    { name: 'tollgate-interop-v2', version: '0.1.0' },
    {
      ...(contract && { jsonSchemaValidator: new AjvV2(createContractAjv() as never) }),
      versionNegotiation: { mode: 'auto' as const },
    },
  )
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { fetch: fetchFn }))
  if (client.getProtocolEra() !== 'modern') throw new Error(`the v2 client negotiated ${client.getProtocolEra()}`)
  return {
    requests,
    listTools: async () => (await client.listTools()).tools,
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  }
}
