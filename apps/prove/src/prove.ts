// The outside proof of quenchz: drives a running server with the official MCP SDK clients (v1 and v2) and raw
// HTTP, from a token manifest. Shares no code with the server. Usage: prove <manifest.json>
import { readFileSync } from 'node:fs'
import { firstText, openSession, type Session } from './clients.js'
import { describeStatus, jsonRpcOf, type Probe, probeDiscover, probeInitialize } from './http.js'
import type { RequirementId } from './requirements.js'

/** How many checks this proof runs. A run that counts differently fails, so a deleted check cannot pass. */
export const DECLARED_CHECKS = 22

/** The server's refusal for unknown and ungranted names, kept here as a local constant on purpose. */
export const NO_SUCH_TOOL = 'no tool by that name is available to this caller'

/** Exit codes: all passed, a check failed (or the count differs), the proof could not run. */
export const EXIT = { passed: 0, failed: 1, cannotRun: 2 } as const

/** The proof could not run at all (no manifest, a manifest missing a field, calls that never run out). */
export class CannotProve extends Error {}

export interface CheckResult {
  id: RequirementId
  desc: string
  ok: boolean
  detail?: string
}

export interface Manifest {
  url: string
  callers: { greedy: string; quiet: string }
  budget: { capacity: number; reserveFraction: number; callerCount: number; clock: string }
  tokens: {
    greedyForThisResource: string
    quietForThisResource: string
    forAnotherResource: string
    forTwoResources: string
    withNoAudience: string
    withoutTheRatesScope: string
  }
}

const DRAIN_CAP = 500

/** Reads and checks the manifest; every token the proof uses must be present, or `Bearer undefined` would pass refusals. */
export function readManifest(path: string): Manifest {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new CannotProve(`cannot read the manifest ${path}: ${(error as Error).message}`)
  }
  const m = raw as Partial<Manifest>
  const tokenNames = [
    'greedyForThisResource',
    'quietForThisResource',
    'forAnotherResource',
    'forTwoResources',
    'withNoAudience',
  ] as const
  if (typeof m.url !== 'string') throw new CannotProve('the manifest has no url')
  for (const name of tokenNames) {
    if (typeof m.tokens?.[name] !== 'string') throw new CannotProve(`the manifest has no token ${name}`)
  }
  const b = m.budget
  if (
    !b ||
    typeof b.capacity !== 'number' ||
    typeof b.reserveFraction !== 'number' ||
    typeof b.callerCount !== 'number'
  ) {
    throw new CannotProve('the manifest has no budget figures')
  }
  return m as Manifest
}

/** One run's shared state: the manifest, the results so far and the tool calls charged to the greedy caller. */
interface ProveRun {
  manifest: Manifest
  results: CheckResult[]
  record(id: RequirementId, desc: string, ok: boolean, detail?: string): void
  /** tools/call requests the greedy token has spent before the budget drain (every call is charged). */
  charged: number
}

/** Runs every check against the server the manifest names, step by step. Throws CannotProve when it cannot run. */
export async function runChecks(manifest: Manifest): Promise<CheckResult[]> {
  const results: CheckResult[] = []
  const run: ProveRun = {
    manifest,
    results,
    record: (id, desc, ok, detail) =>
      results.push(detail === undefined || ok ? { id, desc, ok } : { id, desc, ok, detail }),
    charged: 0,
  }
  await checkAudience(run)
  await checkLegacyReach(run)
  await checkModernPath(run)
  await checkBudget(run)
  return results
}

/** AUDIENCE: raw initialize POSTs, judged by status code. Only a 401 is a refusal; a 5xx never is. */
async function checkAudience(run: ProveRun): Promise<void> {
  const { record } = run
  const { url, tokens } = run.manifest
  const admitted = await probeInitialize(url, tokens.greedyForThisResource)
  record(
    'AUD-ADMIT',
    'a token minted for this resource is admitted (200)',
    admitted.status === 200 && jsonRpcOf(admitted.body)?.result !== undefined,
    describeStatus(admitted),
  )
  for (const [id, name, what] of [
    ['AUD-OTHER', 'forAnotherResource', 'a token for another resource'],
    ['AUD-LIST', 'forTwoResources', 'a token for two resources, this one included'],
    ['AUD-NONE', 'withNoAudience', 'a token with no audience'],
  ] as const) {
    const p = await probeInitialize(url, tokens[name])
    record(id, `${what} is refused (401)`, p.status === 401, describeStatus(p))
    record(
      id,
      `${what} gets a Bearer challenge`,
      challengeOk(p),
      `www-authenticate: ${p.challenge ?? 'absent'}; ${describeStatus(p)}`,
    )
  }
}

/** REACH on the 2025-era path, SDK v1 client, greedy token. */
async function checkLegacyReach(run: ProveRun): Promise<void> {
  const { record, results } = run
  const { url, tokens } = run.manifest
  await group(results, ['REACH-LIST', 'REACH-SAME', 'REACH-SAME', 'REACH-SAME', 'REACH-SAME'], async () => {
    const s = await openSession('v1', url, tokens.greedyForThisResource)
    try {
      const names = await s.listTools()
      record(
        'REACH-LIST',
        'listTools() does not include series.catalogue',
        !names.includes('series.catalogue'),
        `listed: ${names.join(', ')}`,
      )
      run.charged += 2
      const texts = await refusals(s)
      record('REACH-SAME', 'an ungranted and a nonexistent tool both answer isError', texts.bothErrors, texts.detail)
      record('REACH-SAME', 'the two refusals are byte-identical', texts.identical, texts.detail)
      record(
        'REACH-SAME',
        'the refusal is exactly the no-such-tool constant',
        texts.first === NO_SUCH_TOOL,
        texts.detail,
      )
      record('REACH-SAME', 'the refusal names neither the series nor "Unknown tool"', texts.leakFree, texts.detail)
    } finally {
      await s.close()
    }
  })
}

/** The 2026-07-28 path: raw discover behind the audience gate, then the v2 client in auto mode. */
async function checkModernPath(run: ProveRun): Promise<void> {
  const { record, results } = run
  const { url, tokens } = run.manifest
  const modernAdmit = await probeDiscover(url, tokens.greedyForThisResource)
  record(
    'MODERN-AUD',
    "a 2026-07-28 server/discover with this resource's token is admitted (200)",
    modernAdmit.status === 200 && jsonRpcOf(modernAdmit.body)?.result !== undefined,
    describeStatus(modernAdmit),
  )
  const modernList = await probeDiscover(url, tokens.forTwoResources)
  record(
    'MODERN-AUD',
    'a 2026-07-28 server/discover with a two-resource token is refused (401, Bearer)',
    modernList.status === 401 && challengeOk(modernList),
    describeStatus(modernList),
  )
  await group(results, ['MODERN-ERA', 'MODERN-REACH', 'MODERN-REACH', 'MODERN-SERVE'], async () => {
    const s = await openSession('v2-modern', url, tokens.greedyForThisResource)
    try {
      record('MODERN-ERA', 'the v2 client negotiates the 2026-07-28 era', s.era === 'modern', `era: ${s.era}`)
      const names = await s.listTools()
      record(
        'MODERN-REACH',
        'on 2026-07-28, listTools() does not include series.catalogue',
        !names.includes('series.catalogue'),
        `listed: ${names.join(', ')}`,
      )
      run.charged += 2
      const texts = await refusals(s)
      record(
        'MODERN-REACH',
        'on 2026-07-28, the two refusals are isError, identical and the constant',
        texts.bothErrors && texts.identical && texts.first === NO_SUCH_TOOL && texts.leakFree,
        texts.detail,
      )
      run.charged += 1
      const served = await s.call('calendar.why', { day: '2026-04-03' })
      const sc = served.structuredContent
      const text = firstText(served)
      let copy: unknown
      try {
        copy = text === undefined ? undefined : JSON.parse(text)
      } catch {
        copy = undefined
      }
      record(
        'MODERN-SERVE',
        'on 2026-07-28, calendar.why 2026-04-03 is served as good-friday with an identical text copy',
        served.isError !== true && sc?.closed_because === 'good-friday' && JSON.stringify(copy) === JSON.stringify(sc),
        `isError ${served.isError}; structuredContent ${JSON.stringify(sc)}`,
      )
    } finally {
      await s.close()
    }
  })
}

/** BUDGET: drains on fresh sessions; initialize and tools/list are not charged, every tools/call is. */
async function checkBudget(run: ProveRun): Promise<void> {
  const { record, results, manifest } = run
  const { url, tokens } = manifest
  // The admission figures are derived here from the manifest, never read from it.
  const reserve = Math.floor((manifest.budget.capacity * manifest.budget.reserveFraction) / manifest.budget.callerCount)
  const spare = Math.floor(manifest.budget.capacity * (1 - manifest.budget.reserveFraction))
  const greedyShare = reserve + spare
  const charged = run.charged
  record(
    'BUDGET-FROZEN',
    'the budget clock is frozen',
    manifest.budget.clock === 'frozen',
    `clock: ${manifest.budget.clock}`,
  )
  await group(results, ['BUDGET-GREEDY', 'BUDGET-CHARGED', 'BUDGET-QUIET'], async () => {
    const greedy = await drain('v2-legacy', url, tokens.greedyForThisResource)
    record(
      'BUDGET-GREEDY',
      `greedy is admitted ${greedyShare} − ${charged} already charged = ${greedyShare - charged}`,
      greedy === greedyShare - charged,
      `admitted ${greedy}`,
    )
    record(
      'BUDGET-CHARGED',
      'refusals were charged: fewer than the full share remained',
      charged > 0 && greedy < greedyShare,
      `charged ${charged}, admitted ${greedy}`,
    )
    const quiet = await drain('v1', url, tokens.quietForThisResource)
    record(
      'BUDGET-QUIET',
      `the quiet caller still gets exactly its reserve of ${reserve}`,
      quiet === reserve,
      `admitted ${quiet}`,
    )
  })
}

function challengeOk(p: Probe): boolean {
  return p.challenge?.startsWith('Bearer ') === true
}

async function refusals(s: Session) {
  const a = await s.call('series.catalogue', {})
  const b = await s.call('series.cataloguz', {})
  const ta = firstText(a) ?? ''
  const tb = firstText(b) ?? ''
  return {
    bothErrors: a.isError === true && b.isError === true,
    identical: Buffer.from(ta, 'utf8').equals(Buffer.from(tb, 'utf8')) && ta !== '',
    first: ta,
    leakFree: !ta.includes('series') && !ta.includes('Unknown tool'),
    detail: `ungranted: ${JSON.stringify(ta)}; nonexistent: ${JSON.stringify(tb)}`,
  }
}

async function drain(flavour: 'v1' | 'v2-legacy', url: string, token: string): Promise<number> {
  const s = await openSession(flavour, url, token)
  try {
    for (let n = 0; n < DRAIN_CAP; n++) {
      const r = await s.call('calendar.why', { day: '2026-04-03' })
      if (r.isError === true) return n
    }
  } finally {
    await s.close()
  }
  throw new CannotProve(`${DRAIN_CAP} calls were admitted: calls are free`)
}

// Runs a group; if it throws (other than CannotProve), its unrecorded checks fail with the error as detail.
async function group(results: CheckResult[], ids: RequirementId[], body: () => Promise<void>): Promise<void> {
  const before = results.length
  try {
    await body()
  } catch (error) {
    if (error instanceof CannotProve) throw error
    const done = results.length - before
    for (const id of ids.slice(done)) {
      results.push({
        id,
        desc: `${id} (could not run)`,
        ok: false,
        detail: `${(error as Error).name}: ${(error as Error).message}`,
      })
    }
  }
}

/** Prints the results and the summary; returns the exit code (1 also when the run count differs from the declared). */
export function report(results: readonly CheckResult[], declared: number, out: (line: string) => void): number {
  for (const r of results) {
    out(`  ${r.ok ? 'ok  ' : 'FAIL'}  ${r.desc}`)
    if (!r.ok && r.detail) out(`        ${r.detail}`)
  }
  const passed = results.filter((r) => r.ok).length
  out(`${passed} of ${results.length} checks passed.`)
  if (passed < results.length) out(`${results.length - passed} FAILED.`)
  out('Source: ECB statistics.')
  if (results.length !== declared) {
    out(`${results.length} checks ran but ${declared} are declared; a missing check must not pass as a smaller total.`)
    return EXIT.failed
  }
  return passed === results.length ? EXIT.passed : EXIT.failed
}

/** Reads the manifest, runs, reports. */
export async function proveFromManifest(
  path: string | undefined,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  if (path === undefined) {
    err('usage: prove <manifest.json>')
    return EXIT.cannotRun
  }
  try {
    return report(await runChecks(readManifest(path)), DECLARED_CHECKS, out)
  } catch (error) {
    err(`the proof could not run: ${(error as Error).message}`)
    return EXIT.cannotRun
  }
}
