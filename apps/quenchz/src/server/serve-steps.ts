// The steps of serving, each named: who may write the tokens file, who signs tokens, the rates source, the tokens
// file and its key, the budget, the hosts answered for, and the lines said once listening. A step that cannot go on
// throws a StartFailure with the line to print; the composition (serve.ts) then stops what had started.
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { listenProblem } from '@tollgate/cli'
import {
  type Audience,
  type Budget,
  type Clock,
  createAudience,
  type HostAllowList,
  type InProcessIssuer,
  loopbackAllowList,
  manualClock,
  monotonicClock,
  OpenFairBudget,
  wallClock,
} from '@tollgate/gate'
import type { Closers } from '@tollgate/operability'
import { openSource, type RatesSource } from '../rates/index.js'
import type { CliIo } from './cli-io.js'
import type { ClockName } from './cli-options.js'
import { CALLERS, ISSUER } from './constants.js'
import { probeJwks, type SharedBudgetStore, shownRedisTarget, shownUrl } from './deployment.js'
import { createQuenchzMetrics, type QuenchzMetrics } from './metrics.js'
import type { ServePlan } from './serve-plan.js'
import { createKeptIssuer, type KeyFile, keyPathFor, removeKeyFile, writeKeyFile } from './signing-key.js'
import { quenchzBudget } from './start-quenchz.js'
import { buildTokenManifest, writeTokenManifest } from './token-manifest.js'

/** A step that cannot go on: `line` is what to print on stderr, undefined when the step already said why. */
export class StartFailure extends Error {
  constructor(readonly line: string | undefined) {
    super(line ?? 'quenchz could not start (already reported)')
  }
}

/** Callers of a budget policy named one by one in the metrics at most; past it, all are counted as `other`. */
const MAX_NAMED_CALLERS = 50

/**
 * Metrics only with an admin port to serve them on: without one, nothing is counted at all. Callers named in the
 * budget metrics are a set fixed by configuration (never every sub an issuer may mint): the seed's two, or the
 * policy's listed callers when there are few enough to be labels.
 */
export function metricsFor(plan: ServePlan): QuenchzMetrics | undefined {
  if (plan.admin === undefined) return undefined
  const listed = Object.keys(plan.policy?.callers ?? {})
  const namedCallers =
    plan.policy === undefined ? Object.values(CALLERS) : listed.length <= MAX_NAMED_CALLERS ? listed : []
  return createQuenchzMetrics({ namedCallers, jwks: plan.mode.kind === 'jwks' })
}

// Who signs tokens: a fresh in-process key (kept beside the tokens file for `quenchz tokens`) or a real JWKS.
export interface Identity {
  audience: Audience
  /** The in-process issuer and its private key (for the key file); absent with --jwks-url. */
  issuer: InProcessIssuer | undefined
  privateJwk: KeyFile['privateJwk'] | undefined
}

export async function openIdentity(plan: ServePlan, metrics: QuenchzMetrics | undefined): Promise<Identity | string> {
  if (plan.mode.kind === 'jwks') {
    const unreachable = await probeJwks(plan.mode.jwksUrl)
    if (unreachable !== undefined) return unreachable
    const keys = {
      kind: 'jwks' as const,
      url: plan.mode.jwksUrl,
      ...plan.jwks,
      ...(metrics !== undefined && { onFetch: metrics.keySet }),
    }
    const audience = createAudience({ resource: plan.resource, issuer: plan.mode.issuer, keys })
    return { audience, issuer: undefined, privateJwk: undefined }
  }
  const { issuer, privateJwk } = await createKeptIssuer(plan.resource)
  const audience = createAudience({
    resource: plan.resource,
    issuer: ISSUER,
    keys: issuer.keySource(),
    algorithms: ['RS256'],
  })
  return { audience, issuer, privateJwk }
}

// The rates source. The live cache's folder is created on first use.
export async function openRatesSource(
  plan: ServePlan,
  metrics: QuenchzMetrics | undefined,
): Promise<RatesSource | string> {
  try {
    if (plan.source.kind === 'live') mkdirSync(dirname(plan.source.cacheFile), { recursive: true })
    return await openSource(plan.source, metrics?.upstream)
  } catch (error) {
    return `could not open the ${plan.source.kind} source: ${(error as Error).message.split('\n')[0]}`
  }
}

// The tokens file and, beside it, the key file; both owner-only, and the key file removed when serving stops.
export async function writeTokens(
  plan: ServePlan,
  { issuer, privateJwk }: Identity,
  url: string,
  io: CliIo,
  closers: Closers,
): Promise<boolean> {
  if (issuer === undefined || privateJwk === undefined || plan.tokensPath === undefined) return true
  const keyPath = keyPathFor(plan.tokensPath)
  try {
    const manifest = await buildTokenManifest(issuer, url, plan.clock, {
      resource: plan.resource,
      lifetimeSeconds: plan.tokenLifetimeSeconds,
    })
    writeTokenManifest(plan.tokensPath, manifest)
    closers.add('key file', () => removeKeyFile(keyPath))
    writeKeyFile(keyPath, {
      issuer: issuer.issuer,
      resource: plan.resource,
      url,
      clock: plan.clock,
      tokenLifetimeSeconds: plan.tokenLifetimeSeconds,
      keyId: issuer.keyId,
      privateJwk,
    })
  } catch (error) {
    io.stderr(`could not write the tokens file: ${(error as Error).message}`)
    return false
  }
  io.stderr(`tokens written to ${plan.tokensPath} (valid ${plan.tokenLifetimeSeconds} s; renew: quenchz tokens)`)
  return true
}

/**
 * The budget every tools/call is charged to. With the in-process issuer: the seed's fair budget, exactly (agent-alpha
 * and agent-beta, 45/15). With --jwks-url: every verified sub is a caller of the open fair budget (its own reserve,
 * then the shared pool). In memory, or in Redis shared by replicas.
 */
export function budgetFor(plan: ServePlan, shared: SharedBudgetStore | undefined): Budget {
  const clock = CLOCKS[plan.clock]()
  if (plan.policy === undefined) return quenchzBudget(clock, shared?.store)
  return new OpenFairBudget({ policy: plan.policy, clock, ...(shared !== undefined && { store: shared.store }) })
}

/**
 * Hosts this server answers for: the loopback names on a loopback or wildcard bind, the bind address itself
 * otherwise, the public URL's host, and every --allowed-host. Origins follow the hosts, over http and https.
 */
export function allowListOf(plan: Pick<ServePlan, 'host' | 'resource' | 'allowedHosts'>): HostAllowList {
  const bind = plan.host.includes(':') && !plan.host.startsWith('[') ? `[${plan.host}]` : plan.host
  const loopbackOrAny = ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0', '[::]'].includes(bind.toLowerCase())
  const hosts = new Set(loopbackOrAny ? loopbackAllowList().hosts : [bind, `${bind}:*`])
  const publicHost = new URL(plan.resource).host
  hosts.add(publicHost)
  for (const extra of plan.allowedHosts) {
    hosts.add(extra)
    if (!/:(\d+|\*)$/.test(extra) || extra.endsWith(']')) hosts.add(`${extra}:*`)
  }
  const list = [...hosts].map((h) => h.toLowerCase())
  return { hosts: list, origins: list.flatMap((h) => [`http://${h}`, `https://${h}`]) }
}

/** `host` as it appears before `:port` in a URL or a message: an IPv6 address in brackets. */
export function shownHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}

/** Why a listener could not start, naming the flags to change; the line printed before quenchz stops. */
export function listenFailure(error: unknown, host: string, port: number, flags = { port: '--port', host: '--host' }) {
  const problem = listenProblem(error, { host: shownHost(host), port }, flags)
  return problem !== undefined
    ? `quenchz: ${problem}`
    : `could not listen on ${shownHost(host)}:${port}: ${(error as Error).message}`
}

export function announcement(plan: ServePlan, url: string, source: RatesSource): string {
  const extras = [
    plan.mode.kind === 'jwks' ? `, tokens: ${shownUrl(plan.mode.jwksUrl)}` : '',
    plan.redis !== undefined ? `, budget: ${shownRedisTarget(plan.redis)} ${plan.prefix}` : '',
  ].join('')
  return `quenchz listening on ${url} as ${plan.resource} (source: ${source.kind}, budget clock: ${plan.clock}${extras})`
}

/** Budget clocks by name; `wall` (epoch seconds) is the one replicas sharing Redis agree on. */
const CLOCKS: Record<ClockName, () => Clock> = {
  frozen: () => manualClock().now,
  monotonic: () => monotonicClock,
  wall: () => wallClock,
}
