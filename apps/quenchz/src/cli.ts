// `quenchz --port 8931 --tokens-file PATH [--source recordings|history|live …]`: the interop server with an
// in-process issuer. Parses argv, guards the tokens path, writes the token manifest, then serves.
// `--jwks-url URL --issuer ISS` verifies a real issuer's tokens instead (nothing is minted, no manifest), and
// `--budget-redis URL` keeps the fair budget in Redis so replicas share it.
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import {
  type Audience,
  type Clock,
  createAudience,
  createInProcessIssuer,
  type GateEvent,
  type InProcessIssuer,
  manualClock,
  monotonicClock,
  wallClock,
} from '@tollgate/gate'
import { pino } from 'pino'
import { createRatesTools, openSource, type SourceConfig } from './rates/index.js'
import { DEFAULT_PORT, ISSUER, RESOURCE } from './server/constants.js'
import { defaultSource, sharedDir } from './server/default-source.js'
import {
  budgetPrefix,
  connectBudgetStore,
  probeJwks,
  redisUrl,
  type SharedBudgetStore,
  shownUrl,
  tokenMode,
} from './server/deployment.js'
import { isInside, repositoryRoot } from './server/repository-guard.js'
import { quenchzBudget, startQuenchz } from './server/start-quenchz.js'
import { buildTokenManifest, writeTokenManifest } from './server/token-manifest.js'

export const USAGE = `usage: quenchz --tokens-file PATH [--port ${DEFAULT_PORT}] [--host 127.0.0.1]
       [--source history --history FILE | --source recordings --recordings DIR | --source live [--live-url URL] [--cache FILE]]
       [--budget-clock frozen|monotonic|wall] [--budget-redis URL [--budget-prefix quenchz:budget:]] [--log-level warn]
   or: quenchz --jwks-url URL --issuer ISS [same options, without --tokens-file]`

/** Exit codes by outcome. */
export const EXIT = { usage: 2, refused: 1, failed: 1 } as const

export interface CliIo {
  stderr: (line: string) => void
  /** false: do everything up to (not including) listening — the README command test stubs serving this way. */
  serve?: boolean
  cwd?: string
  env?: NodeJS.ProcessEnv
}

/**
 * Runs the CLI. Resolves with an exit code on refusal or failure, with 0 when `serve` is false, and with
 * 'serving' once the server listens (it then runs until SIGINT/SIGTERM).
 */
export async function main(
  argv: readonly string[],
  io: CliIo = { stderr: (l) => process.stderr.write(`${l}\n`) },
): Promise<number | 'serving'> {
  const cwd = io.cwd ?? process.cwd()
  const env = io.env ?? process.env
  let values: Record<string, string | undefined>
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'tokens-file': { type: 'string' },
        source: { type: 'string' },
        history: { type: 'string' },
        recordings: { type: 'string' },
        'live-url': { type: 'string' },
        cache: { type: 'string' },
        'budget-clock': { type: 'string' },
        'jwks-url': { type: 'string' },
        issuer: { type: 'string' },
        'budget-redis': { type: 'string' },
        'budget-prefix': { type: 'string' },
        'log-level': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }).values as Record<string, string | undefined>
  } catch (error) {
    io.stderr(`${(error as Error).message}\n${USAGE}`)
    return EXIT.usage
  }
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    io.stderr(`--port must be an integer from 0 to 65535\n${USAGE}`)
    return EXIT.usage
  }
  const host = values.host ?? '127.0.0.1'
  const mode = tokenMode(values['jwks-url'], values.issuer)
  if (typeof mode === 'string') {
    io.stderr(`${mode}\n${USAGE}`)
    return EXIT.usage
  }
  const tokensFile = values['tokens-file']
  // Refused rather than ignored: a runner waiting for a tokens file that never comes would hang.
  if (mode.kind === 'jwks' && tokensFile !== undefined) {
    io.stderr(`--tokens-file is not used with --jwks-url: tokens come from that issuer and none are minted\n${USAGE}`)
    return EXIT.usage
  }
  if (mode.kind === 'in-process' && tokensFile === undefined) {
    io.stderr(`--tokens-file is required (or --jwks-url and --issuer)\n${USAGE}`)
    return EXIT.usage
  }
  const clockName = values['budget-clock'] ?? 'frozen'
  if (clockName !== 'frozen' && clockName !== 'monotonic' && clockName !== 'wall') {
    io.stderr(`--budget-clock must be frozen, monotonic or wall\n${USAGE}`)
    return EXIT.usage
  }
  const redis = values['budget-redis'] === undefined ? undefined : redisUrl(values['budget-redis'])
  if (typeof redis === 'string') {
    io.stderr(`${redis}\n${USAGE}`)
    return EXIT.usage
  }
  if (redis === undefined && values['budget-prefix'] !== undefined) {
    io.stderr(`--budget-prefix needs --budget-redis\n${USAGE}`)
    return EXIT.usage
  }
  const prefix = budgetPrefix(values['budget-prefix'])
  if (typeof prefix !== 'string') {
    io.stderr(`${prefix.error}\n${USAGE}`)
    return EXIT.usage
  }
  // Each process's monotonic clock starts at its own zero; replicas sharing state must read one clock.
  if (redis !== undefined && clockName === 'monotonic') {
    io.stderr(`--budget-clock monotonic is per process: with --budget-redis use frozen or wall\n${USAGE}`)
    return EXIT.usage
  }

  // 1. Never write bearer tokens inside a checkout: neither this code's repository nor the one we stand in.
  const here = dirname(fileURLToPath(import.meta.url))
  const roots = [repositoryRoot(here), repositoryRoot(cwd)].filter((r): r is string => r !== undefined)
  const tokensPath = tokensFile === undefined ? undefined : resolve(cwd, tokensFile)
  if (tokensPath !== undefined && isInside(tokensPath, roots, cwd)) {
    io.stderr(`refusing to write tokens inside the repository: ${tokensPath}`)
    return EXIT.refused
  }

  const sessionKey = env.MCP_SESSION_KEY
  if (sessionKey !== undefined && sessionKey.length < 32) {
    io.stderr(`MCP_SESSION_KEY must be at least 32 characters (the MAC key of 2025-era session ids)\n${USAGE}`)
    return EXIT.usage
  }

  const sourceConfig = chooseSource(values, roots[0], env, cwd)
  if (typeof sourceConfig === 'string') {
    io.stderr(`${sourceConfig}\n${USAGE}`)
    return EXIT.usage
  }

  // 2. Issuer (fresh key, memory only) or the real issuer's JWKS, tools, frozen budget clock unless told otherwise.
  let issuer: InProcessIssuer | undefined
  let audience: Audience
  if (mode.kind === 'jwks') {
    const unreachable = await probeJwks(mode.jwksUrl)
    if (unreachable !== undefined) {
      io.stderr(unreachable)
      return EXIT.failed
    }
    audience = createAudience({ resource: RESOURCE, issuer: mode.issuer, keys: { kind: 'jwks', url: mode.jwksUrl } })
  } else {
    issuer = await createInProcessIssuer({ issuer: ISSUER, resource: RESOURCE })
    audience = createAudience({ resource: RESOURCE, issuer: ISSUER, keys: issuer.keySource(), algorithms: ['RS256'] })
  }
  let shared: SharedBudgetStore | undefined
  if (redis !== undefined) {
    try {
      shared = await connectBudgetStore(redis, prefix, (message) => io.stderr(message))
    } catch (error) {
      io.stderr((error as Error).message)
      return EXIT.failed
    }
  }
  const closeShared = async () => {
    await shared?.close()
  }
  let source: Awaited<ReturnType<typeof openSource>>
  try {
    source = await openSource(sourceConfig)
  } catch (error) {
    io.stderr(`could not open the ${sourceConfig.kind} source: ${(error as Error).message}`)
    await closeShared()
    return EXIT.failed
  }
  const shownHost = host.includes(':') ? `[${host}]` : host

  // 3. The manifest before listening, so a runner waiting for it knows the server is about to answer.
  // A path that cannot be written (no such directory, no permission) is said plainly, never as a stack trace.
  const writeManifest = async (url: string): Promise<boolean> => {
    if (issuer === undefined || tokensPath === undefined) return true
    try {
      writeTokenManifest(tokensPath, await buildTokenManifest(issuer, url, clockName))
    } catch (error) {
      io.stderr(`could not write the tokens file: ${(error as Error).message}`)
      return false
    }
    io.stderr(`tokens written to ${tokensPath}`)
    return true
  }
  if (port !== 0 && !(await writeManifest(`http://${shownHost}:${port}/mcp`))) {
    await source.close()
    await closeShared()
    return EXIT.failed
  }
  if (io.serve === false) {
    await source.close()
    await closeShared()
    return 0
  }

  const log = pino({ level: values['log-level'] ?? 'warn', base: { service: 'quenchz' } }, pino.destination(2))
  const onEvent = (event: GateEvent) => {
    if (event.kind === 'fault') log.error({ code: event.code, tool: event.tool, err: event.error }, 'server fault')
    else if (event.kind === 'refused-token')
      log.info({ code: event.code, library: event.libraryError }, 'token refused')
    else log.info({ status: event.status }, 'host refused')
  }
  let running: Awaited<ReturnType<typeof startQuenchz>>
  try {
    running = await startQuenchz({
      tools: createRatesTools({ source }),
      audience,
      host,
      port,
      budget: quenchzBudget(CLOCKS[clockName](), shared?.store),
      onEvent,
      // With --budget-redis, 2025-era sessions live in the same Redis; replicas share MCP_SESSION_KEY.
      ...(shared !== undefined && { sessionStore: shared.sessions }),
      ...(sessionKey !== undefined && { sessionKey }),
    })
  } catch (error) {
    // The manifest went out before listening; a server that never listened must not leave live tokens behind.
    if (port !== 0 && tokensPath !== undefined) rmSync(tokensPath, { force: true })
    io.stderr(`could not listen on ${shownHost}:${port}: ${(error as Error).message}`)
    await source.close()
    await closeShared()
    return EXIT.failed
  }
  // The port is only known once bound; the manifest follows immediately.
  if (port === 0 && !(await writeManifest(running.url))) {
    await running.close()
    await source.close()
    await closeShared()
    return EXIT.failed
  }
  const extras = [
    mode.kind === 'jwks' ? `, tokens: ${shownUrl(mode.jwksUrl)}` : '',
    redis !== undefined ? `, budget: redis ${redis.hostname}:${redis.port || '6379'} ${prefix}` : '',
  ].join('')
  io.stderr(`quenchz listening on ${running.url} (source: ${source.kind}${extras})`)
  const stop = (signal: NodeJS.Signals) => {
    void running
      .close()
      .then(() => source.close())
      .then(closeShared)
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : 0))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  return 'serving'
}

/** Budget clocks by name; `wall` (epoch seconds) is the one replicas sharing Redis agree on. */
const CLOCKS: Record<'frozen' | 'monotonic' | 'wall', () => Clock> = {
  frozen: () => manualClock().now,
  monotonic: () => monotonicClock,
  wall: () => wallClock,
}

function chooseSource(
  values: Record<string, string | undefined>,
  repoRoot: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): SourceConfig | string {
  switch (values.source) {
    case undefined: {
      const found = defaultSource(sharedDir(repoRoot, env))
      return (
        found ??
        'no data source found under the shared data directory ($TOLLGATE_SHARED or ../shared): pass --source history --history FILE, --source recordings --recordings DIR, or --source live'
      )
    }
    case 'history':
      return values.history
        ? { kind: 'history', file: resolve(cwd, values.history) }
        : '--source history needs --history FILE (eurofxref-hist .zip or .csv)'
    case 'recordings':
      return values.recordings
        ? { kind: 'recordings', dir: resolve(cwd, values.recordings) }
        : '--source recordings needs --recordings DIR (holding index.json)'
    case 'live':
      return {
        kind: 'live',
        baseUrl: values['live-url'] ?? 'https://data-api.ecb.europa.eu/service/data/EXR',
        cacheFile: values.cache ? resolve(cwd, values.cache) : resolve(tmpdir(), 'quenchz-live-cache.sqlite'),
      }
    default:
      return '--source must be history, recordings or live'
  }
}
