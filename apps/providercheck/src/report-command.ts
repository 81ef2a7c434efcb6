// `providercheck report REPORT.json -o FILE`: the HTML page of an existing sealed report, with its seal checked
// when the secret is at hand.
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { parsePlain } from '@tollgate/strict-json'
import { REPORT_FLAGS, readLongForm } from './command-flags.js'
import { ReportShapeError } from './errors.js'
import { outputPathProblem } from './output-files.js'
import { verifyReport } from './report.js'
import { renderReportHtml, type SealStatus, secretEnvOf } from './report-html.js'
import { asReport } from './report-shape.js'

/** Largest report file read, in bytes (a sealed report of 20 checks with excerpts is well under 100 KiB). */
export const REPORT_MAX_BYTES = 4 * 1024 * 1024

export interface ReportPageCommand {
  kind: 'report'
  file: string
  out: string
}

/** Parses the arguments after `report`: REPORT.json -o FILE (in either order; -o=FILE and --o work too). */
export function parseReportCommand(
  args: readonly string[],
): ReportPageCommand | { kind: 'usage_error'; message: string } {
  const read = readLongForm(args, REPORT_FLAGS)
  if ('message' in read) return { kind: 'usage_error', message: `report: ${read.message} (it takes -o FILE)` }
  if (!('values' in read)) return { kind: 'usage_error', message: 'report takes -o FILE' }
  if (read.positionals.length > 1) return { kind: 'usage_error', message: 'report takes one report file' }
  const file = read.positionals[0]?.text
  if (file === undefined)
    return { kind: 'usage_error', message: 'report needs the report file: report REPORT.json -o FILE' }
  if (read.values.o === undefined)
    return { kind: 'usage_error', message: 'report needs -o FILE (the HTML file to write)' }
  return { kind: 'report', file, out: read.values.o }
}

export type ReportPageOutcome = { exit: 0; message: string } | { exit: 1 | 2; problem: string }

/**
 * Reads, checks and renders the report; writes the page. The seal is checked with `secret`, or with `liveSecret`
 * for a live run's report (environment production); either may be '' (the seal is then not checked).
 */
export function writeReportPage(command: ReportPageCommand, secret: string, liveSecret = ''): ReportPageOutcome {
  const outProblem = outputPathProblem('-o', command.out)
  if (outProblem !== undefined) return { exit: 2, problem: outProblem }
  let bytes: Buffer
  try {
    if (statSync(command.file).size > REPORT_MAX_BYTES) throw new RangeError('too large')
    bytes = readFileSync(command.file)
  } catch {
    return { exit: 2, problem: `cannot read the report ${command.file}` }
  }
  let report: ReturnType<typeof asReport>
  try {
    report = asReport(parsePlain(bytes, { maxBytes: REPORT_MAX_BYTES, maxDepth: 32 }))
  } catch (error) {
    if (error instanceof ReportShapeError) return { exit: 1, problem: `${command.file} is ${error.message}` }
    return { exit: 1, problem: `${command.file} is not strict JSON (a report is what -json writes)` }
  }
  const seal = sealStatusOf(bytes, report.target.environment === 'production' ? liveSecret : secret)
  try {
    writeFileSync(command.out, renderReportHtml(report, seal))
  } catch {
    return { exit: 2, problem: `cannot write the page to ${command.out}` }
  }
  if (seal.state === 'not_verified')
    return { exit: 1, problem: `the report's seal does NOT verify (${seal.reason}); the page ${command.out} says so` }
  return { exit: 0, message: `html: ${command.out} (${sealWords(seal, secretEnvOf(report))})` }
}

function sealStatusOf(bytes: Uint8Array, secret: string): SealStatus {
  if (secret === '') return { state: 'not_checked' }
  const verdict = verifyReport(bytes, secret)
  return verdict.ok ? { state: 'verified' } : { state: 'not_verified', reason: verdict.reason }
}

function sealWords(seal: SealStatus, secretEnv: string): string {
  if (seal.state === 'not_checked') return `seal not checked: ${secretEnv} is not set`
  return `seal ${seal.state}`
}
