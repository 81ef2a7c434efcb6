// The proof reads status codes: a server that errors, or refuses everyone, must not pass.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { type CheckResult, proveFromManifest, report } from '../src/prove.ts'

const dir = mkdtempSync(join(tmpdir(), 'prove-broken-'))
after(() => rmSync(dir, { recursive: true, force: true }))

async function serve(status: number, headers: Record<string, string> = {}): Promise<Server> {
  const server = createServer((req, res) => {
    req.resume()
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end('{"error":"x"}')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return server
}

function manifestFor(server: Server): string {
  const port = (server.address() as AddressInfo).port
  const path = join(dir, `m-${port}.json`)
  const t = 'a.b.c'
  writeFileSync(
    path,
    JSON.stringify({
      url: `http://127.0.0.1:${port}/mcp`,
      callers: { greedy: 'agent-alpha', quiet: 'agent-beta' },
      budget: { capacity: 60, reserveFraction: 0.5, callerCount: 2, clock: 'frozen' },
      tokens: {
        greedyForThisResource: t,
        quietForThisResource: t,
        forAnotherResource: t,
        forTwoResources: t,
        withNoAudience: t,
        withoutTheRatesScope: t,
      },
    }),
  )
  return path
}

async function proveAgainst(server: Server) {
  const out: string[] = []
  const code = await proveFromManifest(
    manifestFor(server),
    (l) => out.push(l),
    (l) => out.push(l),
  )
  server.closeAllConnections()
  await new Promise<void>((r) => server.close(() => r()))
  return { code, out }
}

test('a server answering 500 to everything fails the refusal checks, and says a 500 is not a refusal', async () => {
  const { code, out } = await proveAgainst(await serve(500))
  assert.equal(code, 1)
  assert.ok(out.includes('  FAIL  a token for another resource is refused (401)'))
  assert.ok(out.some((l) => l.includes('status 500: the server errored; that is not a refusal')))
  assert.ok(out.includes('0 of 22 checks passed.') || out.some((l) => /^\d+ of 22 checks passed\.$/.test(l)))
  assert.ok(!out.includes('22 of 22 checks passed.'))
})

test('a server refusing everyone with a Bearer 401 fails the admission check', async () => {
  const { code, out } = await proveAgainst(await serve(401, { 'www-authenticate': 'Bearer error="invalid_token"' }))
  assert.equal(code, 1)
  assert.ok(out.includes('  FAIL  a token minted for this resource is admitted (200)'))
  assert.ok(out.includes('  ok    a token for another resource is refused (401)'))
})

test('a run whose count differs from the declared count fails even when every check passed', () => {
  const results: CheckResult[] = Array.from({ length: 21 }, () => ({ id: 'AUD-ADMIT', desc: 'x', ok: true }))
  const out: string[] = []
  assert.equal(
    report(results, 22, (l) => out.push(l)),
    1,
  )
  assert.ok(out.includes('21 of 21 checks passed.'))
  assert.ok(out.some((l) => l.startsWith('21 checks ran but 22 are declared')))
  assert.equal(
    report([...results, { id: 'AUD-ADMIT', desc: 'x', ok: true }], 22, () => {}),
    0,
  )
})

test('no manifest argument, or an unreadable manifest, exits 2', async () => {
  const err: string[] = []
  assert.equal(
    await proveFromManifest(
      undefined,
      () => {},
      (l) => err.push(l),
    ),
    2,
  )
  assert.deepEqual(err, ['usage: prove <manifest.json>'])
  assert.equal(
    await proveFromManifest(
      join(dir, 'absent.json'),
      () => {},
      () => {},
    ),
    2,
  )
  writeFileSync(join(dir, 'partial.json'), JSON.stringify({ url: 'http://127.0.0.1:1/mcp', tokens: {} }))
  const err2: string[] = []
  assert.equal(
    await proveFromManifest(
      join(dir, 'partial.json'),
      () => {},
      (l) => err2.push(l),
    ),
    2,
  )
  assert.deepEqual(err2, ['the proof could not run: the manifest has no token greedyForThisResource'])
})
