// Test fixture: a gate on 127.0.0.1 port 0 with tiny tools whose content does not matter (audience, reach, budget).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { SessionStore } from '@tollgate/mcp-endpoint'
import {
  type Budget,
  createAudience,
  createGate,
  createInProcessIssuer,
  FairBudget,
  type Gate,
  type GatedTool,
  type GateEvent,
  type InProcessIssuer,
  loopbackAllowList,
  manualClock,
} from '../../src/index.ts'

export const ISSUER = 'https://issuer.quenchz.invalid'
export const RESOURCE = 'https://quenchz.invalid/mcp'
export const ELSEWHERE = 'https://elsewhere.invalid/mcp'

const echoOut = {
  type: 'object',
  properties: { echoed: { type: 'string' }, source: { type: 'string' } },
  required: ['echoed', 'source'],
  additionalProperties: false,
}

/** Three tools under two scopes, shaped like quenchz's: two under `rates:read`, one under `series:list`. */
export const FAKE_TOOLS: GatedTool[] = [
  {
    name: 'calendar.why',
    scope: 'rates:read',
    description: 'Echoes a day.',
    inputSchema: {
      type: 'object',
      properties: { day: { type: 'string' } },
      required: ['day'],
      additionalProperties: false,
    },
    outputSchema: echoOut,
    async call(args) {
      const day = (args as { day: string }).day
      if (day === 'throw') throw new Error('internal detail that must not reach the caller')
      if (day === 'bad-output') return { ok: true, structuredContent: { wrong: 1 }, text: '{}' }
      if (day === 'refuse') return { ok: false, text: 'the tool refused this day' }
      const out = { echoed: day, source: 'test.' }
      return { ok: true, structuredContent: out, text: JSON.stringify(out) }
    },
  },
  {
    name: 'rates.window',
    scope: 'rates:read',
    description: 'Echoes a currency.',
    inputSchema: { type: 'object', properties: { currency: { type: 'string' } }, required: ['currency'] },
    outputSchema: echoOut,
    async call(args) {
      const out = { echoed: (args as { currency: string }).currency, source: 'test.' }
      return { ok: true, structuredContent: out, text: JSON.stringify(out) }
    },
  },
  {
    name: 'series.catalogue',
    scope: 'series:list',
    description: 'Lists nothing.',
    inputSchema: { type: 'object', additionalProperties: false },
    outputSchema: echoOut,
    async call() {
      const out = { echoed: 'catalogue', source: 'test.' }
      return { ok: true, structuredContent: out, text: JSON.stringify(out) }
    },
  },
]

export interface Running {
  url: string
  port: number
  issuer: InProcessIssuer
  gate: Gate
  events: GateEvent[]
  close(): Promise<void>
}

/** Starts a gate with the digest's budget (60, 60/s, f 0.5, two callers) on a frozen clock unless told otherwise. */
export async function startGate(
  overrides: {
    budget?: Budget
    tools?: GatedTool[]
    issuer?: InProcessIssuer
    maxSessionsPerCaller?: number
    maxSessions?: number
    sessionStore?: SessionStore
    sessionKey?: string
    advertisedScopes?: readonly string[]
  } = {},
): Promise<Running> {
  const issuer = overrides.issuer ?? (await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE }))
  const events: GateEvent[] = []
  const gate = createGate({
    serverInfo: { name: 'gate-test', version: '0.0.1' },
    instructions: 'Test server.',
    tools: overrides.tools ?? FAKE_TOOLS,
    audience: createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] }),
    budget:
      overrides.budget ??
      new FairBudget({
        capacity: 60,
        refillPerSecond: 60,
        callers: ['agent-alpha', 'agent-beta'],
        clock: manualClock().now,
      }),
    allowList: loopbackAllowList(),
    ...(overrides.maxSessionsPerCaller !== undefined ? { maxSessionsPerCaller: overrides.maxSessionsPerCaller } : {}),
    ...(overrides.maxSessions !== undefined ? { maxSessions: overrides.maxSessions } : {}),
    ...(overrides.sessionStore !== undefined ? { sessionStore: overrides.sessionStore } : {}),
    ...(overrides.sessionKey !== undefined ? { sessionKey: overrides.sessionKey } : {}),
    ...(overrides.advertisedScopes !== undefined ? { advertisedScopes: overrides.advertisedScopes } : {}),
    onEvent: (e) => events.push(e),
  })
  const server: Server = createServer((req, res) => {
    gate.handle(req, res).catch((error) => {
      events.push({ kind: 'fault', code: 'unhandled', error })
      if (!res.headersSent) res.writeHead(500)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    issuer,
    gate,
    events,
    async close() {
      await gate.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
