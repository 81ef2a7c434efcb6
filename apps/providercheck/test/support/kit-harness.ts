// Starts the real provider (fakemerchant data) on a fresh temp SQLite file, optionally behind the fault proxy,
// and runs the kit against it.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startProvider } from '@tollgate/provider'
import type { CheckResult } from '../../src/index.js'
import { type KitRun, runKit } from '../../src/index.js'
import { type Fault, startFaultProxy } from './fault-proxy.js'

export const SECRET = 'srmps_providercheck_test_0123456789abcdef'
export const TENANT = '0199a3c1-0a0b-7c0d-8e0f-101112131415'
export const FIXTURES = { tenant: TENANT, customer: 'cus_1001', transaction: 'ch_1001', subscription: 'sub_1001' }

/** The seed's command line over REST (issue 8 §3): `-transport rest -base-url <base URL>`. */
export function restKitArgv(url: string, ...extra: string[]): string[] {
  return kitArgv(url, ...extra).map((a, i, all) => (all[i - 1] === '-transport' ? 'rest' : a))
}

/** The seed's command line against `url` with the fixtures, plus any extra arguments. */
export function kitArgv(url: string, ...extra: string[]): string[] {
  return [
    '-sandbox',
    '-transport',
    'mcp',
    '-allow-private',
    '-base-url',
    url,
    '-tenant',
    FIXTURES.tenant,
    '-customer',
    FIXTURES.customer,
    '-transaction',
    FIXTURES.transaction,
    '-subscription',
    FIXTURES.subscription,
    ...extra,
  ]
}

export interface Target {
  /** MCP: the MCP endpoint; REST: the base URL. */
  url: string
  close(): Promise<void>
}

/** A fresh provider; behind the proxy when a fault is given. close() stops both and removes the temp dir. */
export async function freshTarget(
  fault?: Fault,
  answers: 'json' | 'sse' = 'json',
  admission: { bearerToken?: string; edgeHeaders?: Record<string, string> } = {},
  transport: 'mcp' | 'rest' = 'mcp',
): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-'))
  const provider = await startProvider({
    secrets: [SECRET],
    store: { kind: 'sqlite', file: join(dir, 'provider.sqlite') },
    logger: false,
    demoLedger: {},
    ...admission,
    ...(answers === 'sse' && { responseMode: 'sse', legacyResponseMode: 'sse' }),
  })
  const upstream = transport === 'rest' ? provider.baseUrl : provider.url
  const proxy = fault === undefined ? undefined : await startFaultProxy(upstream, SECRET, fault, transport)
  return {
    url: proxy?.url ?? upstream,
    async close() {
      await proxy?.close()
      await provider.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export function runAgainst(
  url: string,
  era: 'auto' | 'legacy' | '2026-07-28' = 'auto',
  profileBudgetMs?: number,
  transport: 'mcp' | 'rest' = 'mcp',
): Promise<KitRun> {
  return runKit({
    transport,
    baseUrl: url,
    secret: SECRET,
    allowPrivate: true,
    fixtures: FIXTURES,
    era,
    ...(profileBudgetMs !== undefined && { profileBudgetMs }),
  })
}

/** id → "verdict code" for compact, readable assertions. */
export function verdicts(results: CheckResult[]): Record<string, string> {
  return Object.fromEntries(results.map((r) => [r.id, r.code === null ? r.verdict : `${r.verdict} ${r.code}`]))
}
