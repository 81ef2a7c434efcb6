import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { secretEnvironment } from '@tollgate/signing'
import { parsePlain } from '@tollgate/strict-json'
import { runCall } from './call-command.js'
import type { CheckResult } from './check-types.js'
import {
  BEARER_TOKEN_ENV,
  type Command,
  LIVE_SECRET_ENV,
  parseCommandLine,
  type RunCommand,
  SECRET_ENV,
  USAGE,
} from './command-line.js'
import { outputPathProblem } from './output-files.js'
import { buildReport, verifyReport } from './report.js'
import { writeReportPage } from './report-command.js'
import { renderReportHtml } from './report-html.js'
import { CHECK_IDS } from './requirements.js'
import { credentialsOf, type KitOptions, kitOptionsProblem, runKit } from './run-kit.js'
import { KIT_NAME, KIT_VERSION } from './version.js'

/** Where the CLI writes: one call per line, without the newline. */
export interface Output {
  out(line: string): void
  err(line: string): void
}

/** Exit codes: every check passed / a check failed or was skipped (or a report does not verify) / usage. */
export const EXIT = { pass: 0, fail: 1, usage: 2 } as const
/** The exit code of a run stopped by Ctrl-C (128 + SIGINT, as shells report it). */
export const EXIT_INTERRUPTED = 130

/** How the bin controls a run: `signal` aborts it (Ctrl-C), ending it as interrupted. */
export interface RunControl {
  signal?: AbortSignal
}

/** One check's line: id, verdict, code ('-' on a pass), reason, duration. A stable format (pinned in tests). */
export function formatLine(result: CheckResult): string {
  return `${result.id.padEnd(22)} ${result.verdict.padEnd(4)}  ${(result.code ?? '-').padEnd(26)} ${result.reason} (${result.durationMs} ms)`
}

/** The CLI: parses argv, runs the kit or verifies a report, prints, and returns the exit code. */
export async function main(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: Output,
  control: RunControl = {},
): Promise<number> {
  let command: Command = parseCommandLine(argv)
  const sandboxSecret = env[SECRET_ENV] ?? ''
  const liveSecret = env[LIVE_SECRET_ENV] ?? ''
  // -live reads the production secret, everything else the sandbox one; neither is ever printed.
  const live = command.kind === 'run' && command.environment === 'production'
  const secret = live ? liveSecret : sandboxSecret
  const secretEnv = live ? LIVE_SECRET_ENV : SECRET_ENV
  if (command.kind === 'help') {
    io.out(USAGE)
    return EXIT.pass
  }
  if (command.kind === 'version') {
    io.out(`${KIT_NAME} ${KIT_VERSION}`)
    return EXIT.pass
  }
  // The page of an existing report needs no secret: without one its seal is shown as not checked.
  if (command.kind === 'report') return reportPage(writeReportPage(command, sandboxSecret, liveSecret), io)
  if (command.kind === 'verify') return verify(command.file, sandboxSecret, liveSecret, io)
  if (command.kind === 'usage_error' && command.missing !== undefined && secret === '') {
    command = { kind: 'usage_error', message: `${command.message}, ${secretEnv} (environment)` }
  } else if (command.kind !== 'usage_error' && secret === '') {
    command = { kind: 'usage_error', message: `missing: ${secretEnv} (environment)` }
  } else if (live && secretEnvironment(secret) !== 'production') {
    command = {
      kind: 'usage_error',
      message: `${LIVE_SECRET_ENV} must hold a production signing secret (srmp_…): -live checks a production endpoint; a sandbox is checked with -sandbox`,
    }
  } else if (command.kind !== 'usage_error' && !live && secretEnvironment(secret) !== 'sandbox') {
    command = { kind: 'usage_error', message: `${SECRET_ENV} must hold a sandbox signing secret (srmps_…)` }
  }
  if (command.kind === 'usage_error') return usageError(command.message, io)
  // An empty variable counts as unset (`export VAR=` is how shells clear one).
  const bearerToken = env[BEARER_TOKEN_ENV] === '' ? undefined : env[BEARER_TOKEN_ENV]
  if (command.kind === 'call') return runCall(command, secret, bearerToken, io)
  const options = kitOptions(command as RunCommand, secret, bearerToken)
  const problem = kitOptionsProblem(options)
  if (problem !== undefined) {
    // The client's reason names a header, never a value; say which input it came from.
    const source = problem.startsWith('the bearer token') ? ` (${BEARER_TOKEN_ENV})` : ' (-edge-header)'
    return usageError(`${problem}${source}`, io)
  }
  // Before any request: a run that refunds and cancels must not lose its verdict to an unwritable path.
  const outputs = [
    ['-json', command.json],
    ['-html', command.html],
  ] as const
  for (const [flag, path] of outputs) {
    const pathProblem = path === undefined ? undefined : outputPathProblem(flag, path)
    if (pathProblem !== undefined) return usageError(pathProblem, io)
  }
  return run(command, options, secret, io, control)
}

/** The usage-error convention of every Tollgate CLI: the one problem, then where the usage is. Exit 2. */
function usageError(message: string, io: Output): number {
  io.err(`providercheck: ${message}`)
  io.err('see providercheck --help')
  return EXIT.usage
}

function reportPage(outcome: ReturnType<typeof writeReportPage>, io: Output): number {
  if (outcome.exit === 0) {
    io.out(outcome.message)
    return EXIT.pass
  }
  if (outcome.exit === EXIT.usage) return usageError(outcome.problem, io)
  io.err(`providercheck: ${outcome.problem}`)
  return outcome.exit
}

function kitOptions(command: RunCommand, secret: string, bearerToken: string | undefined): KitOptions {
  return {
    ...(command.environment === 'production' && { live: true }),
    transport: command.transport,
    baseUrl: command.baseUrl,
    secret,
    allowPrivate: command.allowPrivate,
    era: command.era,
    fixtures: {
      tenant: command.tenant,
      customer: command.customer,
      transaction: command.transaction,
      subscription: command.subscription,
    },
    ...(bearerToken !== undefined && { bearerToken }),
    ...(Object.keys(command.edgeHeaders).length > 0 && { edgeHeaders: command.edgeHeaders }),
  }
}

/** ", bearer token, edge headers A, B" when configured (names only); empty otherwise. */
function credentialsNote(options: KitOptions): string {
  const { bearerToken, edgeHeaderNames } = credentialsOf(options)
  return (
    (bearerToken ? ', bearer token' : '') +
    (edgeHeaderNames.length > 0 ? `, edge headers ${edgeHeaderNames.join(', ')}` : '')
  )
}

async function run(
  command: RunCommand,
  options: KitOptions,
  secret: string,
  io: Output,
  control: RunControl,
): Promise<number> {
  io.out(
    `${KIT_NAME} ${KIT_VERSION}: transport ${command.transport}, ${command.environment === 'production' ? 'live (production: only what changes nothing)' : 'sandbox'}, ${command.baseUrl}${credentialsNote(options)}`,
  )
  const writesReport = command.json !== undefined || command.html !== undefined
  const kit = await runKit(
    {
      ...options,
      ...(control.signal !== undefined && { signal: control.signal }),
      ...(writesReport && { recordExchanges: true }),
    },
    (result) => io.out(formatLine(result)),
  )
  const n = (v: string) => kit.results.filter((r) => r.verdict === v).length
  const ms = kit.finishedAt.getTime() - kit.startedAt.getTime()
  if (kit.interrupted) {
    io.out(
      `interrupted: ${kit.results.length} of ${CHECK_IDS.length} checks ended (${n('pass')} pass, ${n('fail')} fail, ${n('skip')} skip) in ${ms} ms: no verdict`,
    )
  } else {
    io.out(
      `summary: ${n('pass')} pass, ${n('fail')} fail, ${n('skip')} skip of ${kit.results.length} checks in ${ms} ms (${kit.transport === 'rest' ? 'rest' : (kit.era ?? 'era unknown')}): ${kit.passed ? 'PASS' : 'FAIL'}`,
    )
  }
  const exit = kit.interrupted ? EXIT_INTERRUPTED : kit.passed ? EXIT.pass : EXIT.fail
  if (!writesReport) return exit
  const report = buildReport(kit, command, secret)
  const partial = kit.interrupted ? 'partial, ' : ''
  if (command.json !== undefined) {
    if (!writeOutput(command.json, `${JSON.stringify(report, null, 2)}\n`, io)) return EXIT.usage
    io.out(`report: ${command.json} (${partial}sealed; check it with: providercheck verify ${command.json})`)
  }
  if (command.html !== undefined) {
    if (!writeOutput(command.html, renderReportHtml(report, { state: 'sealed', kept: command.json !== undefined }), io))
      return EXIT.usage
    io.out(`html: ${command.html} (${partial}open it in a browser)`)
  }
  return exit
}

function writeOutput(path: string, text: string, io: Output): boolean {
  try {
    writeFileSync(path, text)
    return true
  } catch {
    // Checked before the run; reaching here means the path changed during it.
    io.err(`providercheck: cannot write ${path}`)
    return false
  }
}

// A live run's report is sealed with the production secret: the one to check it with follows what the report says it
// is (a report that lies about its environment is checked with the other secret and does not verify).
function verify(file: string, sandboxSecret: string, liveSecret: string, io: Output): number {
  let bytes: Buffer
  try {
    if (statSync(file).size > 4 * 1024 * 1024) throw new RangeError('too large')
    bytes = readFileSync(file)
  } catch {
    io.err(`providercheck: cannot read the report ${file}`)
    return EXIT.usage
  }
  const production = claimsProduction(bytes)
  const [secret, secretEnv, wanted] = production
    ? [liveSecret, LIVE_SECRET_ENV, 'production' as const]
    : [sandboxSecret, SECRET_ENV, 'sandbox' as const]
  if (secret === '') return usageError(`missing: ${secretEnv} (environment)`, io)
  if (secretEnvironment(secret) !== wanted)
    return usageError(
      `${secretEnv} must hold a ${wanted} signing secret (${wanted === 'production' ? 'srmp_' : 'srmps_'}…)`,
      io,
    )
  const verdict = verifyReport(bytes, secret)
  if (!verdict.ok) {
    io.err(`providercheck: the report's seal does NOT verify (${verdict.reason})`)
    return EXIT.fail
  }
  const r = verdict.report
  io.out(
    `seal verified: ${r.kit.name} ${r.kit.version}, ${r.target.base_url}, ${r.finished_at}, outcome ${r.outcome} (${r.summary.pass} pass, ${r.summary.fail} fail, ${r.summary.skip} skip)`,
  )
  return EXIT.pass
}

/** Whether a report's bytes say it is a live run's (target.environment production); false when they cannot be read. */
function claimsProduction(bytes: Uint8Array): boolean {
  try {
    const value = parsePlain(bytes, { maxBytes: 4 * 1024 * 1024, maxDepth: 32 }) as {
      target?: { environment?: unknown }
    }
    return value?.target?.environment === 'production'
  } catch {
    return false
  }
}
