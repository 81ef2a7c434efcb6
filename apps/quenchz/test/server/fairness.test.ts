// Fairness in time through real HTTP and the official client: while a greedy caller's call is in service, its next
// call waits, and a quiet caller's call is served first. Not timed: the tool itself says when each call started.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  createAudience,
  createInProcessIssuer,
  FairScheduler,
  type GatedTool,
  type InProcessIssuer,
} from '@tollgate/gate'
import { type RunningQuenchz, startQuenchz } from '../../src/server/start-quenchz.ts'
import { type AnyClient, connect, firstText } from './support/clients.ts'

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

for (const scheduled of [true, false]) {
  describe(scheduled ? 'with the fair scheduler (one call per caller in service)' : 'without it (the contrast)', () => {
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
          const c = await connect('v2-modern', server.url, await issuer.mint({ subject, scopes: ['rates:read'] }))
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
