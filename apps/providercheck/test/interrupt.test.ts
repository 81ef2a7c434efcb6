// Ctrl-C as a person presses it: a real CLI process against a provider whose tools/list never answers gets
// SIGINT mid-run; it prints `interrupted`, writes a partial report (sealed, marked as such) and exits 130.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { verifyReport } from '../src/index.js'
import { freshTarget, kitArgv, SECRET } from './support/kit-harness.js'

const app = fileURLToPath(new URL('..', import.meta.url))

test('SIGINT mid-run: an interrupted line, a partial sealed report and page, exit 130', {
  timeout: 30_000,
}, async () => {
  const target = await freshTarget('list_never_answers')
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-interrupt-'))
  try {
    const json = join(dir, 'partial.json')
    const html = join(dir, 'partial.html')
    const child = spawn(
      process.execPath,
      [
        '--conditions=@tollgate/source',
        '--import',
        'tsx',
        'src/cli.ts',
        ...kitArgv(target.url, '-json', json, '-html', html),
      ],
      { cwd: app, env: { ...process.env, PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET } },
    )
    let stdout = ''
    let stderr = ''
    let interrupted = false
    child.stderr.on('data', (c) => {
      stderr += c
    })
    child.stdout.on('data', (c) => {
      stdout += c
      // mcp_profile is now waiting on a tools/list that never answers (up to its 15 s budget): press Ctrl-C.
      if (!interrupted && /^describe +pass/m.test(stdout)) {
        interrupted = true
        child.kill('SIGINT')
      }
    })
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (c, s) => resolve([c, s])),
    )
    assert.equal(interrupted, true, stdout + stderr)
    assert.equal(signal, null, 'the process handled SIGINT itself')
    assert.equal(code, 130, stdout + stderr)
    const lines = stdout.trim().split('\n')
    assert.equal(lines.length, 1 + 2 + 3, stdout)
    assert.match(
      lines[3] as string,
      /^interrupted: 2 of 21 checks ended \(2 pass, 0 fail, 0 skip\) in \d+ ms: no verdict$/,
    )
    assert.match(lines[4] as string, /^report: .*partial\.json \(partial, sealed; check it with: providercheck verify /)
    assert.match(lines[5] as string, /^html: .*partial\.html \(partial, open it in a browser\)$/)
    assert.doesNotMatch(stdout, /summary:/)

    const bytes = readFileSync(json)
    const verdict = verifyReport(bytes, SECRET)
    assert.equal(verdict.ok, true, 'the partial report is sealed')
    const report = JSON.parse(bytes.toString('utf8'))
    assert.equal(report.outcome, 'interrupted')
    assert.deepEqual(
      report.checks.map((c: { id: string }) => c.id),
      ['discovery', 'describe'],
    )
    assert.equal(report.not_run.length, 19)
    assert.equal(report.not_run[0], 'mcp_profile')
    const page = readFileSync(html, 'utf8')
    assert.match(page, /data-testid="outcome">INTERRUPTED</)
    assert.match(page, /Interrupted: 2 of 21 checks ended before the run was stopped; this report is partial\./)
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await target.close()
  }
})
