// Quick start: one tool behind the gate, called by the official v2 client on 2026-07-28. Run by test/examples.test.ts.
//   node --conditions=@tollgate/source --import tsx packages/gate/examples/quick-start.ts
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { createAudience, createGate, createInProcessIssuer, FairBudget, loopbackAllowList } from '../src/index.ts'

const RESOURCE = 'https://api.example.invalid/mcp'

export async function quickStart(log: (line: string) => void): Promise<void> {
  const issuer = await createInProcessIssuer({ issuer: 'https://issuer.example.invalid', resource: RESOURCE })
  const gate = createGate({
    serverInfo: { name: 'quick-start', version: '0.1.0' },
    tools: [
      {
        name: 'clock.now',
        scope: 'clock:read',
        description: 'The server time.',
        inputSchema: { type: 'object', additionalProperties: false },
        outputSchema: { type: 'object', properties: { iso: { type: 'string' } }, required: ['iso'] },
        async call() {
          const out = { iso: new Date().toISOString() }
          return { ok: true, structuredContent: out, text: JSON.stringify(out) }
        },
      },
    ],
    audience: createAudience({ resource: RESOURCE, issuer: issuer.issuer, keys: issuer.keySource() }),
    budget: new FairBudget({ capacity: 10, refillPerSecond: 1, callers: ['me'] }),
    allowList: loopbackAllowList(),
  })
  const server = createServer((req, res) => void gate.handle(req, res))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`
  try {
    const token = await issuer.mint({ subject: 'me', scopes: ['clock:read'] })
    const client = new Client({ name: 'quick-start', version: '0.1.0' }, { versionNegotiation: { mode: 'auto' } })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    )
    log(`era: ${client.getProtocolEra()}`)
    log(`tools: ${(await client.listTools()).tools.map((t) => t.name).join(', ')}`)
    const served = await client.callTool({ name: 'clock.now', arguments: {} })
    log(`clock.now served: ${served.isError !== true}`)
    const hidden = await client.callTool({ name: 'clock.set', arguments: {} })
    log(`clock.set: ${(hidden.content as Array<{ text: string }>)[0]?.text}`)
    await client.close()
  } finally {
    await gate.close()
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await quickStart((l) => console.log(l))
