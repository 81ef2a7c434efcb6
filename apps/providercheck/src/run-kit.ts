import { randomUUID } from 'node:crypto'
import { type Era, PlatformClient, PlatformClientError, type Transport } from '@tollgate/platform-client'
import { secretEnvironment } from '@tollgate/signing'
import type { CheckDefinition, CheckResult, Fixtures, KitContext, KitCredentials } from './check-types.js'
import { CHECKS } from './checks/index.js'
import { CheckFailure, KitConfigError, NotApplicable, UnsuitableFixture } from './errors.js'
import { ExchangeRecorder } from './exchange-recorder.js'
import { SCHEMA_LIMITS } from './profile/schema-limits.js'
import type { CheckId } from './requirements.js'

/** What the kit runs against. */
export interface KitOptions {
  /** 'mcp' (default) or 'rest': the binding under test. */
  transport?: Transport
  /** MCP: the MCP endpoint; REST: the base URL the /v1/… routes hang from (a path prefix allowed). */
  baseUrl: string
  /** The signing secret: a sandbox one (srmps_…), or with `live` a production one (srmp_…); never printed. */
  secret: string
  allowPrivate: boolean
  /** The workspace and fixtures; with `live` each fixture is optional (the reads of one not given do not apply). */
  fixtures: Fixtures
  /**
   * The live contract check of a production endpoint (issue 29 §4): only the checks that change nothing run; the
   * data-changing ones (refunds, cancellations and what rests on them) are skipped not_applicable. Needs a production
   * secret; without `live` a production secret is refused (KitConfigError): a sandbox run refunds and cancels.
   */
  live?: boolean
  /** PEM certificate authorities to trust for an https base URL besides the system's (a private CA). */
  ca?: string | readonly string[]
  /** Force an era instead of detecting it. Default 'auto'. */
  era?: 'auto' | Era
  bearerToken?: string
  edgeHeaders?: Record<string, string>
  /** Per HTTP request, default 30000. */
  timeoutMs?: number
  /** The mcp_profile budget; default the seed's 15 000 ms (lowered only by tests). */
  profileBudgetMs?: number
  now?: () => number
  /** Stops the run between checks or during one (the check in flight is dropped): the run ends interrupted. */
  signal?: AbortSignal
  /** Keep what a failing check sent and what came back on its result (shortened, secrets scrubbed). */
  recordExchanges?: boolean
}

export interface KitRun {
  results: CheckResult[]
  /** true only when every check passed (a not-applicable skip counts as passing; a dependency skip does not). */
  passed: boolean
  transport: Transport
  /** 'production' for a live run (only what changes nothing ran); 'sandbox' (the default when absent) otherwise. */
  environment?: 'sandbox' | 'production'
  /** The MCP era detected; undefined over REST (or when discovery failed). */
  era: Era | undefined
  /** true when options.signal stopped the run: results hold only the checks that ended. */
  interrupted: boolean
  /** Whether a bearer token was sent and which edge header names (never values). */
  credentials: KitCredentials
  startedAt: Date
  finishedAt: Date
}

// The platform client's failure codes, as the kit names them in a failing line.
const CLIENT_CODES: Record<string, string> = {
  ERR_PLATFORM_BASE_URL: 'base_url_rejected',
  ERR_PLATFORM_PRIVATE_ADDRESS: 'base_url_rejected',
  ERR_PLATFORM_REDIRECT: 'redirect',
  ERR_PLATFORM_NETWORK: 'unreachable',
  ERR_PLATFORM_TIMEOUT: 'timeout',
  ERR_PLATFORM_HTTP_STATUS: 'unexpected_status',
  ERR_PLATFORM_BODY_TOO_LARGE: 'body_too_large',
  ERR_PLATFORM_MALFORMED_BODY: 'invalid_json',
  ERR_PLATFORM_DUPLICATE_KEY: 'duplicate_key',
  ERR_PLATFORM_NOT_INTEGER: 'number_not_integer',
  ERR_PLATFORM_JSON_RPC_ERROR: 'json_rpc_error',
  ERR_PLATFORM_NO_ANSWER: 'no_answer',
  ERR_PLATFORM_RESULT_TYPE: 'result_not_complete',
  ERR_PLATFORM_INVALID_RESULT: 'invalid_result',
  ERR_PLATFORM_DISCOVERY: 'discovery_failed',
  ERR_PLATFORM_TOOL_LIST: 'invalid_tool_list',
}

/** What a run sends besides the signature: whether a bearer token, and the edge header NAMES (never values). */
export function credentialsOf(options: Pick<KitOptions, 'bearerToken' | 'edgeHeaders'>): KitCredentials {
  return {
    bearerToken: options.bearerToken !== undefined,
    edgeHeaderNames: Object.keys(options.edgeHeaders ?? {}),
  }
}

/** undefined when runKit would accept these options, else the reason (names only, never a value). */
export function kitOptionsProblem(options: KitOptions): string | undefined {
  try {
    newClient(options)
    return undefined
  } catch (error) {
    if (error instanceof KitConfigError) return error.message
    throw error
  }
}

// The platform client refuses misconfigured headers at construction with a TypeError whose message names the
// header, never its value; the kit turns that into its own error so the CLI can answer with a usage message.
function newClient(options: KitOptions): PlatformClient {
  const environment = secretEnvironment(options.secret)
  if (options.live === true && environment !== 'production')
    throw new KitConfigError('a live run needs a production signing secret (srmp_…)')
  if (options.live !== true && environment === 'production')
    throw new KitConfigError('a production signing secret needs a live run (a sandbox run refunds and cancels)')
  try {
    return new PlatformClient({
      baseUrl: options.baseUrl,
      transport: options.transport ?? 'mcp',
      secret: options.secret,
      allowPrivate: options.allowPrivate,
      era: options.era ?? 'auto',
      // The kit judges one provider per run: a fresh era cache, nothing carried over from earlier runs.
      eraCache: new Map(),
      ...(options.bearerToken !== undefined && { bearerToken: options.bearerToken }),
      ...(options.edgeHeaders !== undefined && { edgeHeaders: options.edgeHeaders }),
      ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      ...(options.ca !== undefined && { ca: options.ca }),
      ...(options.signal !== undefined && { signal: options.signal }),
    })
  } catch (error) {
    if (error instanceof TypeError) throw new KitConfigError(error.message)
    throw error
  }
}

/**
 * Runs every check in order, calling onResult as each ends. Never throws for provider faults; throws
 * KitConfigError (before any request) for options the platform client refuses.
 */
export async function runKit(options: KitOptions, onResult: (result: CheckResult) => void = () => {}): Promise<KitRun> {
  const now = options.now ?? Date.now
  const recorder = options.recordExchanges === true ? new ExchangeRecorder(secretsOf(options)) : undefined
  const client = recorder?.wrap(newClient(options)) ?? newClient(options)
  const ctx = kitContext(options, client, now)
  const startedAt = new Date(now())
  const results: CheckResult[] = []
  const verdicts = new Map<CheckId, CheckResult>()
  let interrupted = false
  for (const check of CHECKS) {
    interrupted = options.signal?.aborted === true
    if (interrupted) break
    const started = now()
    let result = skipped(check, ctx, verdicts)
    if (result === undefined) {
      const ended = await untilAborted(
        runOne(check.id, () => check.run(ctx), started, now),
        options.signal,
      )
      interrupted = ended === undefined
      if (ended === undefined) break
      const exchanges = recorder?.take() ?? []
      result = ended.verdict === 'fail' && exchanges.length > 0 ? { ...ended, exchanges } : ended
    }
    verdicts.set(check.id, result)
    results.push(result)
    onResult(result)
  }
  return {
    results,
    passed: !interrupted && results.every(passedOrNotApplicable),
    interrupted,
    transport: ctx.transport,
    environment: ctx.live === true ? 'production' : 'sandbox',
    era: ctx.state.era,
    credentials: ctx.credentials,
    startedAt,
    finishedAt: new Date(now()),
  }
}

function kitContext(options: KitOptions, client: PlatformClient, now: () => number): KitContext {
  const ctx: KitContext = {
    client,
    transport: client.transport,
    fixtures: options.fixtures,
    call: { correlationId: randomUUID(), channel: 'ticket', externalTicket: 'providercheck' },
    state: {},
    live: options.live === true,
    newKey: (operation) => `${options.fixtures.tenant}:ticket:${ctx.call.correlationId}:${operation}:${randomUUID()}`,
    profileBudgetMs: options.profileBudgetMs ?? SCHEMA_LIMITS.profileBudgetMs,
    now,
    credentials: credentialsOf(options),
  }
  return ctx
}

/**
 * Over REST there is no tool list: a check that needs mcp_profile there rests on what mcp_profile itself rests
 * on (describe), so data-changing checks still run only after the provider described itself.
 */
export function needsOf(check: CheckDefinition, transport: Transport): readonly CheckId[] {
  if (transport === 'mcp') return check.needs
  const profile = CHECKS.find((c) => c.id === 'mcp_profile')?.needs ?? []
  return [...new Set(check.needs.flatMap((id) => (id === 'mcp_profile' ? profile : [id])))]
}

// Why a check does not run, in this order: another binding's check (not_applicable); a check it needs did not
// pass; a tool it calls is missing from the tool list (one fault, one failing line: mcp_profile's).
function skipped(
  check: CheckDefinition,
  ctx: KitContext,
  verdicts: Map<CheckId, CheckResult>,
): CheckResult | undefined {
  const skip = (code: 'not_applicable' | 'dependency_failed' | 'unsuitable_fixture', reason: string): CheckResult => ({
    id: check.id,
    verdict: 'skip',
    code,
    reason,
    durationMs: 0,
  })
  if (check.transports !== undefined && !check.transports.includes(ctx.transport))
    return skip('not_applicable', `applies to ${check.transports.join(', ')} only (this run: ${ctx.transport})`)
  if (ctx.live === true && check.changesData === true)
    return skip('not_applicable', 'changes data: the live check runs only what changes nothing')
  const blocked = needsOf(check, ctx.transport)
    .map((id) => verdicts.get(id))
    .find((r) => r?.verdict !== 'pass')
  if (blocked !== undefined) {
    // A check resting on one that does not apply does not apply either; on one whose fixture was unsuitable it
    // cannot run for the same reason; on a failed or skipped one it is skipped.
    if (blocked.code === 'not_applicable')
      return skip('not_applicable', `${blocked.id} does not apply: ${blocked.reason}`)
    if (blocked.code === 'unsuitable_fixture')
      return skip('unsuitable_fixture', `needs ${blocked.id}, skipped for an unsuitable fixture (see its reason)`)
    return skip('dependency_failed', `needs ${blocked.id} to pass (it ended ${blocked.verdict})`)
  }
  const missing = check.tools?.find((tool) => ctx.state.missingTools?.includes(tool))
  if (missing !== undefined) return skip('dependency_failed', `mcp_profile found ${missing} missing from tools/list`)
  return undefined
}

/** Every value the kit holds that no excerpt may show. */
function secretsOf(options: KitOptions): string[] {
  return [options.secret, options.bearerToken ?? '', ...Object.values(options.edgeHeaders ?? {})]
}

/** The promise's value, or undefined as soon as the signal aborts (the promise is left to settle unobserved). */
async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (signal === undefined) return promise
  if (signal.aborted) return undefined
  let onAbort = () => {}
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined)
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([promise, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

function passedOrNotApplicable(result: CheckResult | undefined): boolean {
  return (
    result !== undefined &&
    (result.verdict === 'pass' || (result.verdict === 'skip' && result.code === 'not_applicable'))
  )
}

async function runOne(
  id: CheckId,
  body: () => Promise<string>,
  started: number,
  now: () => number,
): Promise<CheckResult> {
  const end = (verdict: CheckResult['verdict'], code: string | null, reason: string): CheckResult => ({
    id,
    verdict,
    code,
    reason: oneLine(reason),
    durationMs: Math.max(0, Math.round(now() - started)),
  })
  try {
    return end('pass', null, await body())
  } catch (error) {
    if (error instanceof CheckFailure) return end('fail', error.failureCode, error.message)
    if (error instanceof NotApplicable) return end('skip', 'not_applicable', error.message)
    if (error instanceof UnsuitableFixture) return end('skip', 'unsuitable_fixture', error.message)
    if (error instanceof PlatformClientError) {
      const code = CLIENT_CODES[error.code] ?? 'client_error'
      const hint = code === 'base_url_rejected' ? ' (a local server needs -allow-private)' : ''
      return end('fail', code, error.message + hint)
    }
    // A fault of the kit itself, not of the provider: say so instead of blaming the provider.
    return end('fail', 'kit_error', `the kit failed: ${error instanceof Error ? error.name : 'unknown error'}`)
  }
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat
}
