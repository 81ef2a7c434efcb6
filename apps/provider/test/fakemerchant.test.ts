// fakemerchant serves both bindings on one port and prints both base URLs; a refund over one binding is the same
// operation over the other (a real process, real HTTP).
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { runFakemerchant } from './fakemerchant-process.js'
import { attempt, newKey } from './helpers.js'
import { refundBody, rest } from './rest-helpers.js'

test('fakemerchant prints the MCP and REST base URLs and serves both from one store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-fakemerchant-'))
  const run = runFakemerchant(['--port', '0', '--db', join(dir, 'f.db')])
  try {
    await run.printed(/REST at \S+/)
    const out = run.stdout()
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
    run.child.kill('SIGTERM')
    await run.exited
    rmSync(dir, { recursive: true, force: true })
  }
})
