// What quenchz tells a client to ask for: with a real issuer (--jwks-url) the metadata and the 401 challenge name
// rates:read by default (--advertise-scope), and with the in-process issuer they stay exactly the seed's. Plus the
// JWKS refetch flags. The flow a standard client runs on these is authorization-server.test.ts.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { exportJWK, generateKeyPair } from 'jose'
import { planFromArgv } from '../../src/server/serve-plan.ts'
import { type CliProcess, startCliProcess } from './support/cli-process.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'

const SEED_CHALLENGE =
  'Bearer error="invalid_token", error_description="Authentication required", resource_metadata="https://quenchz.invalid/.well-known/oauth-protected-resource/mcp"'
const { scratch, empty } = scratchWithEmptyRecordings('quenchz-scopes-')
after(async () => {
  for (const cli of started) await cli.stop()
  rmSync(scratch, { recursive: true, force: true })
})

const JWKS = ['--jwks-url', 'https://issuer.example/jwks', '--issuer', 'https://issuer.example']
const plan = (args: string[]) => planFromArgv(args, scratch, {})
const problem = (args: string[]) => (plan(args) as { problem?: string }).problem

describe('--advertise-scope and the JWKS refetch flags', () => {
  test('with --jwks-url: rates:read by default, the scopes given, or none', () => {
    assert.deepEqual((plan(JWKS) as { advertisedScopes: string[] }).advertisedScopes, ['rates:read'])
    const both = plan([...JWKS, '--advertise-scope', 'rates:read', '--advertise-scope', 'series:list'])
    assert.deepEqual((both as { advertisedScopes: string[] }).advertisedScopes, ['rates:read', 'series:list'])
    const none = plan([...JWKS, '--advertise-scope', 'none'])
    assert.deepEqual((none as { advertisedScopes: string[] }).advertisedScopes, [])
  })

  test('with the in-process issuer: nothing is advertised, and the flags are refused rather than ignored', () => {
    const tokens = ['--tokens-file', join(scratch, 't.json')]
    assert.deepEqual((plan(tokens) as { advertisedScopes: string[] }).advertisedScopes, [])
    assert.equal(problem([...tokens, '--advertise-scope', 'rates:read']), '--advertise-scope needs --jwks-url')
    assert.equal(problem([...tokens, '--jwks-cooldown', '1']), '--jwks-cooldown needs --jwks-url')
    assert.equal(problem([...tokens, '--jwks-max-age', '60']), '--jwks-max-age needs --jwks-url')
  })

  test('a scope that cannot sit in a challenge, or none mixed with a scope, is a usage problem naming the flag', () => {
    for (const bad of ['rates read', 'rates"read', 'rates\\read', '']) {
      assert.match(problem([...JWKS, '--advertise-scope', bad]) ?? '', /^--advertise-scope must be a scope name/, bad)
    }
    assert.equal(
      problem([...JWKS, '--advertise-scope', 'none', '--advertise-scope', 'rates:read']),
      '--advertise-scope none cannot be combined with a scope',
    )
  })

  test('the JWKS timings: 5 s and 300 s by default, in whole seconds within bounds', () => {
    assert.deepEqual((plan(JWKS) as { jwks: unknown }).jwks, { cooldownMs: 5000, maxAgeMs: 300_000 })
    const tuned = plan([...JWKS, '--jwks-cooldown', '0', '--jwks-max-age', '60'])
    assert.deepEqual((tuned as { jwks: unknown }).jwks, { cooldownMs: 0, maxAgeMs: 60_000 })
    assert.equal(problem([...JWKS, '--jwks-max-age', '0']), '--jwks-max-age must be a whole number from 1 to 86400')
    assert.equal(problem([...JWKS, '--jwks-cooldown=-1']), '--jwks-cooldown must be a whole number from 0 to 3600')
  })
})

const started: CliProcess[] = []
async function startCli(args: string[]): Promise<string> {
  const cli = await startCliProcess(['--port', '0', ...args], scratch)
  started.push(cli)
  return cli.url
}

async function challengeAndMetadata(url: string): Promise<{ challenge: string | null; metadata: unknown }> {
  const refused = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  assert.equal(refused.status, 401)
  await refused.text()
  const metadataUrl = new URL(url)
  metadataUrl.pathname = `/.well-known/oauth-protected-resource${metadataUrl.pathname}`
  return { challenge: refused.headers.get('www-authenticate'), metadata: await (await fetch(metadataUrl)).json() }
}

describe('what a running quenchz advertises', () => {
  test('--tokens-file: the seed’s exact challenge and metadata without scopes_supported', async () => {
    const url = await startCli([
      '--tokens-file',
      join(scratch, 'tokens.json'),
      '--source',
      'recordings',
      '--recordings',
      empty,
    ])
    const { challenge, metadata } = await challengeAndMetadata(url)
    assert.equal(challenge, SEED_CHALLENGE)
    assert.deepEqual(metadata, {
      resource: 'https://quenchz.invalid/mcp',
      authorization_servers: ['https://issuer.quenchz.invalid'],
      bearer_methods_supported: ['header'],
    })
  })

  test('--jwks-url: scope="rates:read" in the challenge and scopes_supported; --advertise-scope none: neither', async () => {
    const { publicKey } = await generateKeyPair('RS256')
    const body = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'RS256', use: 'sig' }] })
    const jwks = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body))
    await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r))
    try {
      const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`
      const common = ['--jwks-url', jwksUrl, '--issuer', 'https://issuer.example', '--source', 'recordings']
      const advertised = await challengeAndMetadata(await startCli([...common, '--recordings', empty]))
      assert.equal(
        advertised.challenge,
        'Bearer error="invalid_token", error_description="Authentication required", scope="rates:read", resource_metadata="https://quenchz.invalid/.well-known/oauth-protected-resource/mcp"',
      )
      assert.deepEqual((advertised.metadata as { scopes_supported?: unknown }).scopes_supported, ['rates:read'])
      const silent = await challengeAndMetadata(
        await startCli([...common, '--recordings', empty, '--advertise-scope', 'none']),
      )
      assert.equal(silent.challenge, SEED_CHALLENGE)
      assert.equal((silent.metadata as { scopes_supported?: unknown }).scopes_supported, undefined)
    } finally {
      jwks.closeAllConnections()
      await new Promise<void>((r) => jwks.close(() => r()))
    }
  })
})
