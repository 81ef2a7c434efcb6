// The CLI and the demo as processes: the seed's command line against a fresh real provider, the sealed report
// verified by `providercheck verify`, and a tampered copy refused.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { startProvider } from '@tollgate/provider'
import { freshTarget, kitArgv, SECRET } from './support/kit-harness.js'

const app = fileURLToPath(new URL('..', import.meta.url))

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--conditions=@tollgate/source', '--import', 'tsx', ...args], {
      cwd: app,
      env: { ...process.env, ...env },
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => {
      stdout += c
    })
    child.stderr.on('data', (c) => {
      stderr += c
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

test('the CLI passes a fresh provider, writes a sealed report that verifies, and a tampered one does not', async () => {
  const target = await freshTarget()
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-cli-'))
  try {
    const env = { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET }
    const report = join(dir, 'report.json')
    const argv = ['src/cli.ts', ...kitArgv(target.url, '-json', report)]
    const r = await run(argv, env)
    assert.equal(r.code, 0, r.stdout + r.stderr)
    const lines = r.stdout.trim().split('\n')
    assert.equal(lines.length, 1 + 21 + 2)
    assert.match(lines[1] as string, /^discovery {14}pass {2}- {26}/)
    assert.match(lines[22] as string, /^summary: 20 pass, 0 fail, 1 skip of 21 checks in \d+ ms \(2026-07-28\): PASS$/)
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(SECRET))
    // Amounts read unambiguously: never `2000 USD`, always the minor units with the major amount beside them.
    assert.match(r.stdout, /^refund +pass +- +2000 minor \(20\.00 USD\) refunded: succeeded/m)
    assert.match(r.stdout, /^get_transaction +pass +- +ch_1001: succeeded, 4999 minor \(49\.99 USD\)/m)
    assert.doesNotMatch(r.stdout, /\d (USD|EUR)\b(?! *\))/)

    const ok = await run(['src/cli.ts', 'verify', report], env)
    assert.equal(ok.code, 0, ok.stderr)
    assert.match(ok.stdout, /^seal verified: providercheck 0\.1\.0, .* outcome pass \(20 pass, 0 fail, 1 skip\)/)

    const tampered = join(dir, 'tampered.json')
    writeFileSync(tampered, readFileSync(report, 'utf8').replace('"outcome": "pass"', '"outcome": "fail"'))
    const bad = await run(['src/cli.ts', 'verify', tampered], env)
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /seal does NOT verify \(seal_mismatch\)/)
  } finally {
    rmSync(dir, { recursive: true, force: true })
    await target.close()
  }
})

test('the demo runs the kit over MCP and over REST, each against a fresh fakemerchant, and exits with their status', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'providercheck-demo-test-'))
  try {
    const report = join(dir, 'kept.json')
    const r = await run(['scripts/demo.ts'], { PROVIDERCHECK_DEMO_REPORT: report })
    assert.equal(r.code, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /summary: 20 pass, 0 fail, 1 skip of 21 checks in \d+ ms \(2026-07-28\): PASS/)
    assert.match(r.stdout, /summary: 20 pass, 0 fail, 1 skip of 21 checks in \d+ ms \(rest\): PASS/)
    assert.equal(r.stdout.match(/seal verified/g)?.length, 2)
    assert.match(r.stdout, /^demo: mcp PASS, rest PASS$/m)
    assert.ok(existsSync(report))
    // Kept: the page beside the report, and the secret in a 0600 file with the command that reads it.
    assert.match(readFileSync(join(dir, 'kept.html'), 'utf8'), /data-testid="outcome">PASS</)
    const secretFile = join(dir, 'kept.secret')
    assert.equal(statSync(secretFile).mode & 0o777, 0o600)
    const secret = readFileSync(secretFile, 'utf8').trim()
    assert.match(secret, /^srmps_[0-9a-f]{48}$/)
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), 'the secret never reaches the terminal')
    const command = `PROVIDERCHECK_SANDBOX_SIGNING_SECRET="$(cat ${secretFile})" npx providercheck verify ${report}`
    assert.ok(r.stdout.includes(`  ${command}\n`), r.stdout)
    const verified = await run(['src/cli.ts', 'verify', report], { PROVIDERCHECK_SANDBOX_SIGNING_SECRET: secret })
    assert.equal(verified.code, 0, verified.stderr)
    // The REST run's report, page and secret sit beside the MCP run's (-rest before the extension).
    assert.match(readFileSync(join(dir, 'kept-rest.html'), 'utf8'), /data-testid="outcome">PASS</)
    const restSecretFile = join(dir, 'kept-rest.secret')
    assert.equal(statSync(restSecretFile).mode & 0o777, 0o600)
    const restSecret = readFileSync(restSecretFile, 'utf8').trim()
    assert.notEqual(restSecret, secret, 'each transport runs on a fresh provider with its own secret')
    assert.ok(!r.stdout.includes(restSecret), 'the secret never reaches the terminal')
    const restReport = join(dir, 'kept-rest.json')
    assert.ok(
      r.stdout.includes(
        `  PROVIDERCHECK_SANDBOX_SIGNING_SECRET="$(cat ${restSecretFile})" npx providercheck verify ${restReport}\n`,
      ),
    )
    const restVerified = await run(['src/cli.ts', 'verify', restReport], {
      PROVIDERCHECK_SANDBOX_SIGNING_SECRET: restSecret,
    })
    assert.equal(restVerified.code, 0, restVerified.stderr)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('the demo exits non-zero when only one transport fails (a REST provider signing with another secret)', async () => {
  const { runDemo } = await import('../scripts/demo.js')
  const out: string[] = []
  const code = await runDemo({
    io: { out: (l) => out.push(l), err: (l) => out.push(l) },
    start: (options, transport) =>
      startProvider(transport === 'rest' ? { ...options, secrets: ['srmps_not_the_kits_secret_0123456789'] } : options),
  })
  assert.equal(code, 1, out.join('\n'))
  assert.match(out.join('\n'), /^demo: mcp PASS, rest FAIL$/m)
})

test('`providercheck call … | head`: a reader that has gone ends the command quietly, exit 141, no stack trace', async () => {
  const target = await freshTarget(undefined, 'json', {}, 'rest')
  try {
    const child = spawn(
      process.execPath,
      [
        '--conditions=@tollgate/source',
        '--import',
        'tsx',
        'src/cli.ts',
        'call',
        '-transport',
        'rest',
        '-allow-private',
        '-base-url',
        target.url,
        'sr_get_transaction',
        '{"transaction_ref":"ch_1001"}',
      ],
      {
        cwd: app,
        env: { ...process.env, PROVIDERCHECK_SANDBOX_SIGNING_SECRET: SECRET },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    // The reader goes away before the first line is written (as `head` does once it has its lines).
    child.stdout.destroy()
    let stderr = ''
    child.stderr.on('data', (c) => {
      stderr += c
    })
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
    assert.equal(code, 141, stderr)
    assert.equal(stderr, '')
  } finally {
    await target.close()
  }
})
