import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { APP_DIR, type CliRun, LINE_FORM, runCliProcess } from '../scripts/cli-runner.js'
import { BASE_TEXT } from './helpers.js'

let work: string
before(() => {
  work = mkdtempSync(join(tmpdir(), 'preflight-cli-'))
  writeFileSync(join(work, 'good.json'), BASE_TEXT)
  writeFileSync(join(work, '-dash.json'), BASE_TEXT)
  mkdirSync(join(work, 'real'))
  writeFileSync(join(work, 'real', 'good.json'), BASE_TEXT)
  symlinkSync('real', join(work, 'linkdir'))
  symlinkSync('good.json', join(work, 'link.json'))
  symlinkSync('nowhere.json', join(work, 'dangling.json'))
  mkdirSync(join(work, 'real', 'sub'))
  writeFileSync(join(work, 'real', 'sub', 'good.json'), BASE_TEXT)
  const pad = (n: number) =>
    Buffer.concat([Buffer.from(BASE_TEXT), Buffer.alloc(n - Buffer.byteLength(BASE_TEXT), 0x0a)])
  writeFileSync(join(work, 'exactly-1MiB.json'), pad(1_048_576))
  writeFileSync(join(work, 'over-by-one.json'), pad(1_048_577))
})
after(() => rmSync(work, { recursive: true, force: true }))

/** Runs the CLI in the temp dir and checks what every run must satisfy: one line of the exact form, no stderr. */
async function run(args: string[], cwd?: string): Promise<CliRun & { line: Record<string, unknown> }> {
  const r = await runCliProcess(args, { cwd: cwd ?? work })
  assert.match(r.stdout, LINE_FORM)
  assert.equal(r.stderr, '')
  const line = JSON.parse(r.stdout) as Record<string, unknown>
  assert.equal(r.status, line.exit_code, 'process exit code equals exit_code')
  return { ...r, line }
}

async function expectRun(args: string[], outcome: string, exitCode: number, diagnostic: string, cwd?: string) {
  const r = await run(args, cwd)
  assert.deepEqual(r.line, { diagnostic, exit_code: exitCode, outcome, version: '0.1.0' })
  for (const a of args) if (a.length > 2) assert.ok(!r.stdout.includes(a), 'the path is not echoed')
}

test('prints the seed line byte for byte for examples/01-current_control.json and exits 0', async () => {
  const r = await runCliProcess(['examples/01-current_control.json'], { cwd: APP_DIR })
  assert.equal(
    r.stdout,
    '{"diagnostic":"educational_expected_match","exit_code":0,"outcome":"consistent_sample","version":"0.1.0"}\n',
  )
  assert.equal(r.status, 0)
  assert.equal(r.stderr, '')
})

test('the amount-mismatch example gives mismatch, exit 1', async () => {
  await expectRun(['examples/04-mismatch_amount_minor.json'], 'mismatch', 1, 'expected_amount_mismatch', APP_DIR)
})

describe('arguments', () => {
  test('--help is usage, exit 0', () => expectRun(['--help'], 'usage', 0, 'usage_check_one_file'))
  test('no argument is invalid_input, exit 2 (stdin is not read)', () =>
    expectRun([], 'invalid_input', 2, 'argument_count_invalid'))
  test('two arguments are invalid_input, exit 2', () =>
    expectRun(['good.json', 'good.json'], 'invalid_input', 2, 'argument_count_invalid'))
  test('--help with another argument is invalid_input', () =>
    expectRun(['--help', 'good.json'], 'invalid_input', 2, 'argument_count_invalid'))
  test('a name starting with - is an unknown option; ./-name reads the file', async () => {
    await expectRun(['-dash.json'], 'invalid_input', 2, 'argument_unknown_option')
    await expectRun(['-'], 'invalid_input', 2, 'argument_unknown_option')
    await expectRun(['--version'], 'invalid_input', 2, 'argument_unknown_option')
    await expectRun(['./-dash.json'], 'consistent_sample', 0, 'educational_expected_match')
  })
  test('an empty path argument is invalid_input', () => expectRun([''], 'invalid_input', 2, 'argument_empty_path'))
})

describe('file-system refusals are input_io_error, exit 4', () => {
  test('a symlink as the final component (even to a good file)', () =>
    expectRun(['link.json'], 'input_io_error', 4, 'path_symlink'))
  test('a dangling symlink is a symlink, not a missing file', () =>
    expectRun(['dangling.json'], 'input_io_error', 4, 'path_symlink'))
  test('a symlink in a parent directory', () => expectRun(['linkdir/good.json'], 'input_io_error', 4, 'path_symlink'))
  test('a symlink in a grandparent directory', () =>
    expectRun(['linkdir/sub/good.json'], 'input_io_error', 4, 'path_symlink'))
  test('the same file through real directories is read', async () => {
    await expectRun(['real/sub/good.json'], 'consistent_sample', 0, 'educational_expected_match')
    await expectRun(['./real/../real/sub/./good.json'], 'consistent_sample', 0, 'educational_expected_match')
  })
  test('a directory', async () => {
    await expectRun(['real'], 'input_io_error', 4, 'path_not_regular_file')
    await expectRun(['real/'], 'input_io_error', 4, 'path_not_regular_file')
    await expectRun(['.'], 'input_io_error', 4, 'path_not_regular_file')
  })
  test('a FIFO is refused without blocking', async (t) => {
    try {
      execFileSync('mkfifo', [join(work, 'pipe.fifo')])
    } catch {
      t.skip('mkfifo is not available on this system')
      return
    }
    await expectRun(['pipe.fifo'], 'input_io_error', 4, 'path_not_regular_file')
  })
  test('a character device', { skip: !existsSync('/dev/null') && 'no /dev/null' }, () =>
    expectRun(['/dev/null'], 'input_io_error', 4, 'path_not_regular_file'),
  )
  test('a missing file', () => expectRun(['missing.json'], 'input_io_error', 4, 'path_not_found'))
  test('a regular file used as a directory', () =>
    expectRun(['good.json/x.json'], 'input_io_error', 4, 'path_component_not_directory'))
})

describe('size limit', () => {
  test('exactly 1 MiB is read and checked', () =>
    expectRun(['exactly-1MiB.json'], 'consistent_sample', 0, 'educational_expected_match'))
  test('1 MiB + 1 byte is invalid_input, exit 2', () =>
    expectRun(['over-by-one.json'], 'invalid_input', 2, 'input_too_large'))
})

test('the input file is unchanged by a run', async () => {
  const hash = () =>
    createHash('sha256')
      .update(readFileSync(join(work, 'good.json')))
      .digest('hex')
  const before = hash()
  await run(['good.json'])
  assert.equal(hash(), before)
})

test('an unexpected fault is internal_error, exit 2, with no exception text anywhere', async () => {
  const r = await runCliProcess(['good.json'], {
    cwd: work,
    preload: join(APP_DIR, 'test', 'fixtures', 'fault-in-check.ts'),
  })
  assert.equal(r.stdout, '{"diagnostic":"internal_error","exit_code":2,"outcome":"internal_error","version":"0.1.0"}\n')
  assert.equal(r.status, 2)
  assert.equal(r.stderr, '')
})

test('the installed bin shim runs the bundled CLI', async (t) => {
  if (!existsSync(join(APP_DIR, 'bundle', 'bin', 'preflight.cjs'))) {
    t.skip('bundle/bin/preflight.cjs is not built (npm ci builds it through prepare)')
    return
  }
  const out = execFileSync(
    process.execPath,
    [join(APP_DIR, 'bin', 'preflight.cjs'), 'examples/01-current_control.json'],
    {
      cwd: APP_DIR,
      encoding: 'utf8',
    },
  )
  assert.equal(
    out,
    '{"diagnostic":"educational_expected_match","exit_code":0,"outcome":"consistent_sample","version":"0.1.0"}\n',
  )
})
