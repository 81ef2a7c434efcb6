// Validation run: the CLI as a subprocess over examples/manifest.json plus generated negative inputs in a temp dir.
// Records expected vs actual outcome/exit code/diagnostic, input SHA-256 before and after, and checks that stdout
// has the exact line form, stderr is empty and stdout never echoes input values. `npm run validate` writes the
// committed reference validation/tests.json; the test run (test/validation.test.ts) writes its copy to a temp dir.

import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { arch, platform, release, tmpdir } from 'node:os'
import { join } from 'node:path'
import { APP_DIR, parseLine, runCliProcess } from './cli-runner.js'

interface Case {
  name: string
  /** Arguments for the CLI (relative paths resolved against `cwd`). */
  args: string[]
  cwd: string
  /** File whose SHA-256 is recorded before and after; undefined = not applicable (missing, FIFO, directory, args). */
  hashed?: string | undefined
  outcome: string
  exit_code: number
  diagnostic: string
  /** Input values that must never appear on stdout. */
  secrets: string[]
}

interface CaseResult {
  name: string
  expected: { outcome: string; exit_code: number; diagnostic: string }
  actual: { outcome: string | null; exit_code: number | null; diagnostic: string | null }
  sha256_before: string
  sha256_after: string
  stdout_form_ok: boolean
  stderr_empty: boolean
  stdout_leaks: boolean
  pass: boolean
}

const sha = (file: string | undefined): string =>
  file === undefined ? 'n/a' : createHash('sha256').update(readFileSync(file)).digest('hex')

// Values of identifying fields, as they appear in the text (quotes removed); short or empty ones are skipped
// because they cannot be told apart from the line's own vocabulary.
const VALUE_FIELDS =
  /"(order_id|refund_id|rpc_id|id|amount_minor|text|message)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g
function secretsOf(text: string): string[] {
  const out = new Set<string>()
  for (const m of text.matchAll(VALUE_FIELDS)) {
    const raw = m[2]!.startsWith('"') ? m[2]!.slice(1, -1) : m[2]!
    if (raw.length >= 3) out.add(raw)
  }
  return [...out]
}

const base = readFileSync(join(APP_DIR, 'examples', '01-current_control.json'), 'utf8')
const baseDoc = JSON.parse(base) as {
  protocol_version: string
  expected: Record<string, unknown>
  response: { jsonrpc: string; id: unknown; result?: Record<string, unknown>; error?: unknown }
}
const variant = (edit: (d: typeof baseDoc) => void): string => {
  const d = structuredClone(baseDoc)
  edit(d)
  return JSON.stringify(d, null, 2)
}
const receiptOf = (d: typeof baseDoc) => d.response.result!.structuredContent as Record<string, unknown>

/** The committed reference report's folder. */
export const REFERENCE_DIR = join(APP_DIR, 'validation')

export async function validate(reportDir: string = REFERENCE_DIR): Promise<{ results: CaseResult[]; report: string }> {
  const work = mkdtempSync(join(tmpdir(), 'preflight-validate-'))
  try {
    const cases: Case[] = []
    const manifest = JSON.parse(readFileSync(join(APP_DIR, 'examples', 'manifest.json'), 'utf8')) as {
      cases: { file: string; outcome: string; exit_code: number; diagnostic: string }[]
    }
    for (const c of manifest.cases) {
      const rel = join('examples', c.file)
      const text = readFileSync(join(APP_DIR, rel), 'utf8')
      cases.push({
        name: `example ${c.file}`,
        args: [rel],
        cwd: APP_DIR,
        hashed: join(APP_DIR, rel),
        ...c,
        secrets: [...secretsOf(text), c.file],
      })
    }

    const file = (
      name: string,
      content: string | Buffer,
      expect: [string, number, string],
      extraSecrets: string[] = [],
    ) => {
      const path = join(work, name)
      writeFileSync(path, content)
      const text = Buffer.isBuffer(content) ? content.toString('latin1') : content
      cases.push({
        name,
        args: [name],
        cwd: work,
        hashed: path,
        outcome: expect[0],
        exit_code: expect[1],
        diagnostic: expect[2],
        secrets: [...secretsOf(text), name, ...extraSecrets],
      })
    }
    const II = 'invalid_input'
    file(
      'dup-key-top-level.json',
      base.replace(
        '"protocol_version": "2026-07-28",',
        '"protocol_version": "2026-07-28", "protocol_version": "2025-11-25",',
      ),
      [II, 2, 'input_duplicate_key'],
    )
    file(
      'dup-key-escaped-status.json',
      base.replace('"status": "succeeded"', '"status": "pending", "st\\u0061tus": "succeeded"'),
      [II, 2, 'input_duplicate_key'],
    )
    file(
      'broken-utf8.json',
      Buffer.concat([Buffer.from(base.replace('Educational', 'Educ')), Buffer.from([0xc3, 0x28])]),
      [II, 2, 'input_invalid_utf8'],
    )
    file('utf8-bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(base)]), [II, 2, 'input_bom'])
    const padded = (size: number) =>
      Buffer.concat([Buffer.from(base), Buffer.alloc(size - Buffer.byteLength(base), 0x20)])
    file('exactly-1-MiB.json', padded(1_048_576), ['consistent_sample', 0, 'educational_expected_match'])
    file('over-limit-by-one-byte.json', padded(1_048_577), [II, 2, 'input_too_large'])
    file(
      'deep-nesting.json',
      variant((d) => {
        d.response.result!.content = '@DEEP@'
      }).replace('"@DEEP@"', `${'['.repeat(200_000)}${']'.repeat(200_000)}`),
      [II, 2, 'input_too_deep'],
    )
    file(
      'nan-amount.json',
      base.replace('"amount_minor": 1500,\n    "currency"', '"amount_minor": NaN,\n    "currency"'),
      [II, 2, 'input_non_finite_number'],
    )
    file(
      'overflow-amount.json',
      base.replace('"amount_minor": 1500,\n    "currency"', '"amount_minor": 1e400,\n    "currency"'),
      [II, 2, 'input_number_overflow'],
    )
    file('truncated.json', base.slice(0, 200), [II, 2, 'input_malformed_json'])
    file('empty.json', '', [II, 2, 'input_malformed_json'])
    file('trailing-content.json', `${base}{}`, [II, 2, 'input_trailing_content'])
    file('lone-surrogate.json', base.replace('Educational sample', 'Educational \\ud800 sample'), [
      II,
      2,
      'input_lone_surrogate',
    ])
    file(
      'amount-float.json',
      variant((d) => {
        d.expected.amount_minor = '@F@'
      }).replace('"@F@"', '1500.0'),
      [II, 2, 'expected_amount_minor_invalid'],
    )
    file(
      'amount-bool.json',
      variant((d) => {
        d.expected.amount_minor = true
      }),
      [II, 2, 'expected_amount_minor_invalid'],
    )
    file(
      'real-looking-order-id.json',
      variant((d) => {
        d.expected.order_id = 'ORD-2026-000123'
      }),
      [II, 2, 'expected_order_id_invalid'],
    )
    file(
      'id-true.json',
      variant((d) => {
        d.response.id = true
      }),
      ['invalid_envelope', 2, 'rpc_id_invalid'],
    )
    file(
      'id-string-vs-integer.json',
      variant((d) => {
        d.expected.rpc_id = 7
        d.response.id = '7'
      }),
      ['invalid_envelope', 2, 'rpc_id_mismatch'],
    )
    file(
      'mixed-result-and-error.json',
      variant((d) => {
        d.response.error = { code: -32000, message: 'Server error' }
      }),
      ['invalid_envelope', 2, 'response_channel_ambiguous'],
    )
    file(
      'current-profile-no-result-type.json',
      variant((d) => {
        delete d.response.result!.resultType
      }),
      ['invalid_envelope', 2, 'result_type_missing'],
    )
    file(
      'unknown-protocol-version.json',
      variant((d) => {
        d.protocol_version = '2099-01-01'
      }),
      ['out_of_scope', 3, 'protocol_version_unsupported'],
      ['2099-01-01'],
    )
    file(
      'receipt-array.json',
      variant((d) => {
        d.response.result!.structuredContent = [receiptOf(baseDoc)]
      }),
      ['invalid_receipt', 2, 'receipt_not_object'],
    )
    file(
      'mismatch-beats-pending.json',
      variant((d) => {
        receiptOf(d).status = 'pending'
        receiptOf(d).order_id = 'example-order-2'
      }),
      ['mismatch', 1, 'expected_order_id_mismatch'],
    )
    file('-dash-name.json', base, ['consistent_sample', 0, 'educational_expected_match'])
    cases[cases.length - 1]!.args = ['./-dash-name.json']

    // File-system refusals.
    mkdirSync(join(work, 'realdir'))
    writeFileSync(join(work, 'realdir', 'input.json'), base)
    symlinkSync('realdir', join(work, 'linkdir'))
    symlinkSync(join('realdir', 'input.json'), join(work, 'link.json'))
    const io = (name: string, args: string[], diagnostic: string, hashed?: string) =>
      cases.push({
        name,
        args,
        cwd: work,
        hashed,
        outcome: 'input_io_error',
        exit_code: 4,
        diagnostic,
        secrets: [...args],
      })
    io('symlink-final-component', ['link.json'], 'path_symlink', join(work, 'realdir', 'input.json'))
    io('symlink-parent-directory', ['linkdir/input.json'], 'path_symlink', join(work, 'realdir', 'input.json'))
    io('directory', ['realdir'], 'path_not_regular_file')
    io('missing-file', ['no-such-file.json'], 'path_not_found')
    let fifo = false
    try {
      execFileSync('mkfifo', [join(work, 'input.fifo')])
      fifo = true
    } catch {
      // Without mkfifo the FIFO case cannot be built; it is recorded as not run rather than passed.
    }
    if (fifo) io('fifo', ['input.fifo'], 'path_not_regular_file')

    // Arguments.
    const arg = (name: string, args: string[], outcome: string, exit_code: number, diagnostic: string) =>
      cases.push({ name, args, cwd: work, outcome, exit_code, diagnostic, secrets: args.filter((a) => a.length >= 3) })
    arg('help', ['--help'], 'usage', 0, 'usage_check_one_file')
    arg('no-arguments', [], II, 2, 'argument_count_invalid')
    arg('two-arguments', ['a.json', 'b.json'], II, 2, 'argument_count_invalid')
    arg('unknown-option', ['-dash-name.json'], II, 2, 'argument_unknown_option')

    const results: CaseResult[] = []
    // Two at a time: the machine is shared and each run is a full node start.
    let next = 0
    const worker = async () => {
      while (next < cases.length) {
        const c = cases[next++]!
        const before = sha(c.hashed)
        const run = await runCliProcess(c.args, { cwd: c.cwd })
        const after = sha(c.hashed)
        const line = parseLine(run.stdout)
        const leaks = c.secrets.some((s) => run.stdout.includes(s))
        const actual = { outcome: line?.outcome ?? null, exit_code: run.status, diagnostic: line?.diagnostic ?? null }
        const pass =
          line !== undefined &&
          actual.outcome === c.outcome &&
          actual.exit_code === c.exit_code &&
          line.exit_code === c.exit_code &&
          actual.diagnostic === c.diagnostic &&
          run.stderr === '' &&
          !leaks &&
          before === after
        results.push({
          name: c.name,
          expected: { outcome: c.outcome, exit_code: c.exit_code, diagnostic: c.diagnostic },
          actual,
          sha256_before: before,
          sha256_after: after,
          stdout_form_ok: line !== undefined,
          stderr_empty: run.stderr === '',
          stdout_leaks: leaks,
          pass,
        })
      }
    }
    await Promise.all([worker(), worker()])
    results.sort((a, b) => cases.findIndex((c) => c.name === a.name) - cases.findIndex((c) => c.name === b.name))

    const passed = results.filter((r) => r.pass).length
    const report = {
      tool: '@tollgate/preflight',
      version: '0.1.0',
      node: process.version,
      os: `${platform()} ${release()} ${arch()}`,
      date: new Date().toISOString(),
      counts: { total: results.length, passed, failed: results.length - passed, fifo_case_run: fifo },
      cases: results,
    }
    const outDir = reportDir
    if (!existsSync(outDir)) mkdirSync(outDir, { recursive: true })
    const reportPath = join(outDir, 'tests.json')
    writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`)
    return { results, report: reportPath }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

// Run as a script (npm run validate); test/validation.test.ts imports validate() instead.
if (process.argv[1]?.endsWith('validate.ts')) {
  const { results, report } = await validate()
  for (const r of results) {
    if (!r.pass) console.log(`FAIL ${r.name}: expected ${JSON.stringify(r.expected)} got ${JSON.stringify(r.actual)}`)
  }
  const failed = results.filter((r) => !r.pass).length
  console.log(`validation: ${results.length - failed}/${results.length} cases pass; report ${report}`)
  process.exitCode = failed === 0 ? 0 : 1
}
