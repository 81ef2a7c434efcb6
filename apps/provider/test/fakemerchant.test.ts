// fakemerchant serves both bindings on one port and prints both base URLs; a refund over one binding is the same
// operation over the other (a real process, real HTTP).
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { attempt, newKey, SECRET } from './helpers.js'
import { refundBody, rest } from './rest-helpers.js'

const APP = fileURLToPath(new URL('..', import.meta.url))

test('fakemerchant prints the MCP and REST base URLs and serves both from one store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-fakemerchant-'))
  const child = spawn(
    process.execPath,
    [
      '--conditions=@tollgate/source',
      '--import',
      'tsx',
      'src/fakemerchant.ts',
      '--port',
      '0',
      '--db',
      join(dir, 'f.db'),
    ],
    { cwd: APP, env: { ...process.env, SIGNING_SECRET: SECRET }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  try {
    const out = await new Promise<string>((resolve, reject) => {
      let text = ''
      child.stdout?.on('data', (d: Buffer) => {
        text += d.toString()
        if (/REST at \S+/.test(text)) resolve(text)
      })
      void exited.then((code) => reject(new Error(`fakemerchant exited ${code}`)))
    })
    const mcpUrl = /serving (http:\/\/127\.0\.0\.1:\d+\/mcp) /.exec(out)?.[1]
    const restUrl = /REST at (http:\/\/127\.0\.0\.1:\d+\/v1\/) \(base URL (http:\/\/127\.0\.0\.1:\d+)\)/.exec(out)
    assert.ok(mcpUrl !== undefined, out)
    assert.ok(restUrl !== null, out)
    const [, v1, base] = restUrl as unknown as [string, string, string]
    assert.equal(new URL(v1).port, new URL(mcpUrl).port)
    assert.equal(`${base}/v1/`, v1)

    const key = newKey()
    const overRest = await rest(base, 'POST', '/v1/refunds', { body: refundBody('ch_1001', 1234), key })
    assert.equal(overRest.status, 200, overRest.text)
    const overMcp = await attempt(mcpUrl, 'modern', 'sr_refund', {
      idempotency_key: key,
      request: refundBody('ch_1001', 1234),
    })
    assert.equal(overMcp.content[0]?.text, overRest.text)
  } finally {
    child.kill('SIGTERM')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
})
