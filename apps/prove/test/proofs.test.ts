// The runner end to end: starts quenchz from its CLI, proves it with the official clients, stops it.
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { findSharedData } from '@tollgate/test-support'

const root = fileURLToPath(new URL('../../../', import.meta.url))
// quenchz's default source is the shared ECB data; without it there is nothing to serve.
const noData = findSharedData('data').skip

test('the runner starts quenchz, proves all 22 checks and exits 0', { skip: noData }, () => {
  const run = spawnSync(
    process.execPath,
    ['--conditions=@tollgate/source', '--import', 'tsx', join(root, 'apps/prove/src/run-proofs.ts')],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, QUENCHZ_PORT: '' },
    },
  )
  const lines = run.stdout.split('\n')
  assert.equal(run.status, 0, `${run.stdout}\n${run.stderr}`)
  assert.ok(lines.includes('22 of 22 checks passed.'), run.stdout)
  assert.ok(lines.includes('Source: ECB statistics.'))
  assert.equal(lines.filter((l) => l.startsWith('  ok    ')).length, 22)
  assert.equal(lines.filter((l) => l.startsWith('  FAIL')).length, 0)
})

test('the runner exits 2 when the server never writes its manifest', { skip: noData }, () => {
  const run = spawnSync(
    process.execPath,
    ['--conditions=@tollgate/source', '--import', 'tsx', join(root, 'apps/prove/src/run-proofs.ts')],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, QUENCHZ_PORT: '', QUENCHZ_ARGS: '--source ftp' },
    },
  )
  assert.equal(run.status, 2)
  assert.match(run.stderr, /the server never wrote its token manifest/)
  assert.equal(run.stdout, '')
})

test('an interrupted runner exits 130 and removes its temporary directory', { skip: noData }, async () => {
  const ours = () => new Set(readdirSync(tmpdir()).filter((d) => d.startsWith('quenchz-proof-')))
  const before = ours()
  const child = spawn(
    process.execPath,
    ['--conditions=@tollgate/source', '--import', 'tsx', join(root, 'apps/prove/src/run-proofs.ts')],
    { cwd: root, env: { ...process.env, QUENCHZ_PORT: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
  })
  // Interrupt once the server says it is listening: the manifest exists and the proof is about to run.
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8')
    if (err.includes('quenchz listening on') && child.exitCode === null) child.kill('SIGINT')
  })
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  assert.equal(code, 130, `${out}\n${err}`)
  assert.ok(!out.includes('checks passed.'), 'the run was cut short')
  const left = [...ours()].filter((d) => !before.has(d))
  assert.deepEqual(left, [])
  // The server it started is stopped too: its port stops answering (polled, since SIGTERM is asynchronous).
  const url = /quenchz listening on (http:\/\/\S+)\/mcp/.exec(err)?.[1]
  assert.ok(url, err)
  let answering = true
  for (let i = 0; i < 100 && answering; i++) {
    answering = await fetch(`${url}/.well-known/oauth-protected-resource/mcp`).then(
      () => true,
      () => false,
    )
    if (answering) await new Promise((r) => setTimeout(r, 100))
  }
  assert.equal(answering, false, 'the server outlived the runner')
})
