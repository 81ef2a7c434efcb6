// Fairness in time through real HTTP and the official clients of both eras (SDK v2 on 2026-07-28, SDK v1 with
// 2025-era sessions): while a greedy caller's call is in service, its next call waits, and a quiet caller's call is
// served first; past its bound on waiting calls, a greedy caller's call is refused at once (429, Retry-After).
// Not timed: the tool itself says when each call started.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  createAudience,
  createInProcessIssuer,
  FairScheduler,
  type GatedTool,
  type InProcessIssuer,
  manualClock,
} from '@tollgate/gate'
import { pino } from 'pino'
import { logEvent } from '../../src/cli.ts'
import { type RunningQuenchz, startQuenchz } from '../../src/server/start-quenchz.ts'
import { type AnyClient, type ClientPath, connect, firstText } from './support/clients.ts'

const ISSUER = 'https://issuer.quenchz.invalid'
const RESOURCE = 'https://quenchz.invalid/mcp'

/** A tool whose calls start in order and finish only when the test releases them. */
function heldTool(started: string[], releases: Map<string, () => void>): GatedTool {
  return {
    name: 'test.hold',
    scope: 'rates:read',
    description: 'Holds until released.',
    inputSchema: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
    async call(args) {
      const label = (args as { label: string }).label
      started.push(label)
      await new Promise<void>((r) => releases.set(label, r))
      return { ok: true, structuredContent: { label }, text: label }
    },
  }
}

async function until(condition: () => boolean): Promise<void> {
  // Bounded: each turn yields to the event loop so the server can progress; no wall-clock assertion.
  for (let i = 0; i < 2000 && !condition(); i++) await new Promise((r) => setTimeout(r, 1))
  assert.ok(condition(), 'the expected state was never reached')
}

const CASES: Array<{ path: ClientPath; era: string; scheduled: boolean }> = [
  { path: 'v2-modern', era: '2026-07-28, SDK v2', scheduled: true },
  { path: 'v2-modern', era: '2026-07-28, SDK v2', scheduled: false },
  { path: 'v1', era: '2025 era, SDK v1 with sessions', scheduled: true },
  { path: 'v1', era: '2025 era, SDK v1 with sessions', scheduled: false },
]

for (const { path, era, scheduled } of CASES) {
  describe(`${era}: ${scheduled ? 'with the fair scheduler (one call per caller in service)' : 'without it (the contrast)'}`, () => {
    let issuer: InProcessIssuer
    let server: RunningQuenchz
    const started: string[] = []
    const releases = new Map<string, () => void>()
    const clients: AnyClient[] = []
    before(async () => {
      issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
      server = await startQuenchz({
        tools: [heldTool(started, releases)],
        audience: createAudience({
          resource: RESOURCE,
          issuer: ISSUER,
          keys: issuer.keySource(),
          algorithms: ['RS256'],
        }),
        port: 0,
        ...(scheduled ? { scheduler: new FairScheduler({ perCaller: 1 }) } : {}),
      })
    })
    after(async () => {
      for (const [, release] of releases) release()
      for (const c of clients) await c.close()
      await server?.close()
    })

    test(
      scheduled
        ? "a greedy caller's second concurrent call waits while a quiet caller's call is served first"
        : 'every call starts at once, whoever sent it',
      async () => {
        const open = async (subject: string) => {
          const c = await connect(path, server.url, await issuer.mint({ subject, scopes: ['rates:read'] }))
          assert.equal(c.era, path === 'v1' ? 'legacy' : 'modern')
          clients.push(c)
          return c
        }
        const greedy = await open('agent-alpha')
        const quiet = await open('agent-beta')
        const g1 = greedy.callTool('test.hold', { label: 'g1' })
        await until(() => started.includes('g1'))
        const g2 = greedy.callTool('test.hold', { label: 'g2' })
        const q1 = quiet.callTool('test.hold', { label: 'q1' })
        await until(() => started.includes('q1'))
        if (scheduled) {
          assert.deepEqual(started, ['g1', 'q1'], 'g2 has not started: its caller already has a call in service')
          releases.get('q1')?.()
          assert.equal(firstText(await q1), 'q1')
          assert.deepEqual(started, ['g1', 'q1'])
          releases.get('g1')?.()
          await until(() => started.includes('g2'))
          releases.get('g2')?.()
        } else {
          await until(() => started.includes('g2'))
          assert.deepEqual([...started].sort(), ['g1', 'g2', 'q1'])
          for (const label of ['g1', 'g2', 'q1']) releases.get(label)?.()
        }
        assert.deepEqual([firstText(await g1), firstText(await g2), firstText(await q1)], ['g1', 'g2', 'q1'])
      },
    )
  })
}

describe('a caller past its bound on waiting calls is refused at once: 429 with Retry-After, logged at warn', () => {
  let issuer: InProcessIssuer
  let server: RunningQuenchz
  const scheduler = new FairScheduler({ perCaller: 1, maxWaitingPerCaller: 1 })
  const started: string[] = []
  const releases = new Map<string, () => void>()
  const clients: AnyClient[] = []
  const logLines: Array<Record<string, unknown>> = []
  before(async () => {
    issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
    const log = pino({ level: 'info' }, { write: (line: string) => void logLines.push(JSON.parse(line)) })
    server = await startQuenchz({
      tools: [heldTool(started, releases)],
      audience: createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] }),
      port: 0,
      budgetClock: manualClock().now,
      scheduler,
      onEvent: logEvent(log),
    })
  })
  after(async () => {
    for (const [, release] of releases) release()
    for (const c of clients) await c.close()
    await server?.close()
  })

  for (const path of ['v2-modern', 'v1'] as const) {
    test(`${path === 'v1' ? 'SDK v1 (2025 session)' : 'SDK v2 (2026-07-28)'}: the third greedy call is refused, unrun and uncharged; the quiet caller is not`, async () => {
      started.length = 0
      releases.clear()
      logLines.length = 0
      const answers: Response[] = []
      const watching: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        // Only refusals are kept (a clone of a streamed answer nobody reads would hold it back).
        if (!response.ok) answers.push(response.clone())
        return response
      }
      const greedyToken = await issuer.mint({ subject: 'agent-alpha', scopes: ['rates:read'] })
      const greedy = await connect(path, server.url, greedyToken, { fetch: watching })
      const quiet = await connect(
        path,
        server.url,
        await issuer.mint({ subject: 'agent-beta', scopes: ['rates:read'] }),
      )
      clients.push(greedy, quiet)
      const g1 = greedy.callTool('test.hold', { label: 'g1' })
      await until(() => started.includes('g1'))
      const g2 = greedy.callTool('test.hold', { label: 'g2' })
      await until(() => scheduler.waiting === 1)
      answers.length = 0
      // Each official client rejects the call with the status (v2 SdkHttpError.status, v1 StreamableHTTPError.code)
      // and the refusal's text.
      await assert.rejects(greedy.callTool('test.hold', { label: 'g3' }), (error: unknown) => {
        const e = error as { status?: unknown; code?: unknown; message: string }
        assert.equal(path === 'v1' ? e.code : e.status, 429)
        assert.match(e.message, /this caller already has 1 calls waiting; retry once some are answered/)
        return true
      })
      assert.equal(answers.length, 1)
      const refused = answers[0] as Response
      assert.equal(refused.status, 429)
      assert.equal(refused.headers.get('retry-after'), '1')
      const body = (await refused.json()) as { id: unknown; error: unknown }
      assert.equal(typeof body.id, 'number', 'the refusal answers the request it refuses')
      assert.deepEqual(body.error, {
        code: -32000,
        message: 'this caller already has 1 calls waiting; retry once some are answered',
        data: { reason: 'queue-full', retryAfterSeconds: 1 },
      })
      // The quiet caller's call starts at once although the greedy queue is full.
      const q1 = quiet.callTool('test.hold', { label: 'q1' })
      await until(() => started.includes('q1'))
      releases.get('q1')?.()
      assert.equal(firstText(await q1), 'q1')
      releases.get('g1')?.()
      await until(() => started.includes('g2'))
      releases.get('g2')?.()
      assert.deepEqual([firstText(await g1), firstText(await g2)], ['g1', 'g2'])
      assert.deepEqual(started, ['g1', 'q1', 'g2'], 'g3 never ran')
      const refusal = logLines.filter((l) => l.outcome === 'queue-full')
      assert.deepEqual(
        refusal.map((l) => [l.level, l.msg, l.sub, l.tool, l.limit]),
        [[40, 'call refused', 'agent-alpha', null, 1]],
      )
      // Charged: g1 and g2 only. The refused g3 came between their charges; had it been charged, g2 would have
      // found the reserve two units lower than g1 left it, not one.
      const greedyCalls = logLines.filter((l) => l.msg === 'call' && l.sub === 'agent-alpha')
      const reserves = greedyCalls.map((l) => (l.left as { reserve: number }).reserve)
      assert.equal(reserves.length, 2)
      assert.equal(reserves[1], (reserves[0] as number) - 1)
      const logText = JSON.stringify(logLines)
      for (const secret of ['g3', greedyToken]) assert.ok(!logText.includes(secret), 'no token or argument logged')
    })
  }
})
