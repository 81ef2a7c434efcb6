// The runner end to end: starts quenchz from its CLI, proves it with the official clients, stops it.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const shared = process.env.TOLLGATE_SHARED ?? join(root, '..', 'shared')
const noData = existsSync(join(shared, 'data'))
  ? undefined
  : `the shared ECB data is absent (${shared}); quenchz has no source to serve`

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
