import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { secretEnvironment } from '@tollgate/signing'
import { runCall } from './call-command.js'
import type { CheckResult } from './check-types.js'
import { BEARER_TOKEN_ENV, type Command, parseCommandLine, type RunCommand, SECRET_ENV, USAGE } from './command-line.js'
import { buildReport, verifyReport } from './report.js'
import { credentialsOf, type KitOptions, kitOptionsProblem, runKit } from './run-kit.js'
import { KIT_NAME, KIT_VERSION } from './version.js'

/** Where the CLI writes: one call per line, without the newline. */
export interface Output {
  out(line: string): void
  err(line: string): void
}

/** Exit codes: every check passed / a check failed or was skipped (or a report does not verify) / usage. */
export const EXIT = { pass: 0, fail: 1, usage: 2 } as const

/** One check's line: id, verdict, code ('-' on a pass), reason, duration. A stable format (pinned in tests). */
export function formatLine(result: CheckResult): string {
  return `${result.id.padEnd(22)} ${result.verdict.padEnd(4)}  ${(result.code ?? '-').padEnd(26)} ${result.reason} (${result.durationMs} ms)`
}

/** The CLI: parses argv, runs the kit or verifies a report, prints, and returns the exit code. */
export async function main(argv: readonly string[], env: NodeJS.ProcessEnv, io: Output): Promise<number> {
  let command: Command = parseCommandLine(argv)
  const secret = env[SECRET_ENV] ?? ''
  if (command.kind === 'help') {
    io.out(USAGE)
    return EXIT.pass
  }
  if (command.kind === 'usage_error' && command.message.startsWith('missing:') && secret === '') {
    command = { kind: 'usage_error', message: `${command.message}, ${SECRET_ENV} (environment)` }
  } else if (command.kind !== 'usage_error' && secret === '') {
    command = { kind: 'usage_error', message: `missing: ${SECRET_ENV} (environment)` }
  } else if (command.kind !== 'usage_error' && secretEnvironment(secret) !== 'sandbox') {
    command = { kind: 'usage_error', message: `${SECRET_ENV} must hold a sandbox signing secret (srmps_…)` }
  }
  if (command.kind === 'usage_error') {
    io.err(`providercheck: ${command.message}`)
    io.err(USAGE)
    return EXIT.usage
  }
  if (command.kind === 'verify') return verify(command.file, secret, io)
  // An empty variable counts as unset (`export VAR=` is how shells clear one).
  const bearerToken = env[BEARER_TOKEN_ENV] === '' ? undefined : env[BEARER_TOKEN_ENV]
  if (command.kind === 'call') return runCall(command, secret, bearerToken, io)
  const options = kitOptions(command as RunCommand, secret, bearerToken)
  const problem = kitOptionsProblem(options)
  if (problem !== undefined) {
    // The client's reason names a header, never a value; say which input it came from.
    const source = problem.startsWith('the bearer token') ? ` (${BEARER_TOKEN_ENV})` : ' (-edge-header)'
    io.err(`providercheck: ${problem}${source}`)
    io.err(USAGE)
    return EXIT.usage
  }
  return run(command as RunCommand, options, secret, io)
}

function kitOptions(command: RunCommand, secret: string, bearerToken: string | undefined): KitOptions {
  return {
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

async function run(command: RunCommand, options: KitOptions, secret: string, io: Output): Promise<number> {
  io.out(
    `${KIT_NAME} ${KIT_VERSION}: transport ${command.transport}, sandbox, ${command.baseUrl}${credentialsNote(options)}`,
  )
  const kit = await runKit(options, (result) => io.out(formatLine(result)))
  const n = (v: string) => kit.results.filter((r) => r.verdict === v).length
  const ms = kit.finishedAt.getTime() - kit.startedAt.getTime()
  io.out(
    `summary: ${n('pass')} pass, ${n('fail')} fail, ${n('skip')} skip of ${kit.results.length} checks in ${ms} ms (${kit.transport === 'rest' ? 'rest' : (kit.era ?? 'era unknown')}): ${kit.passed ? 'PASS' : 'FAIL'}`,
  )
  if (command.json !== undefined) {
    const report = buildReport(kit, command, secret)
    try {
      writeFileSync(command.json, `${JSON.stringify(report, null, 2)}\n`)
    } catch {
      io.err(`providercheck: cannot write the report to ${command.json}`)
      return EXIT.usage
    }
    io.out(`report: ${command.json} (sealed; check it with: providercheck verify ${command.json})`)
  }
  return kit.passed ? EXIT.pass : EXIT.fail
}

function verify(file: string, secret: string, io: Output): number {
  let bytes: Buffer
  try {
    if (statSync(file).size > 4 * 1024 * 1024) throw new RangeError('too large')
    bytes = readFileSync(file)
  } catch {
    io.err(`providercheck: cannot read the report ${file}`)
    return EXIT.usage
  }
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
