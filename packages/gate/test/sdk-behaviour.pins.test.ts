// Pins the SDK behaviour that makes the gate's own checks necessary. If a release changes it, these fail loudly
// instead of the reasons in the README silently going stale.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { bearerAuthChallengeResponse, verifyBearerToken } from '@modelcontextprotocol/server'

const RESOURCE = 'https://quenchz.invalid/mcp'
const METADATA = 'https://quenchz.invalid/.well-known/oauth-protected-resource/mcp'
const expiresAt = () => Math.floor(Date.now() / 1000) + 60

test('the SDK bearer check with requiredScopes answers 403 and names the missing scope: why scope is never enforced at the transport', async () => {
  const verifier = {
    verifyAccessToken: async (token: string) => ({
      token,
      clientId: 'agent-alpha',
      scopes: ['rates:read'],
      expiresAt: expiresAt(),
    }),
  }
  const options = { verifier, requiredScopes: ['series:list'], resourceMetadataUrl: METADATA }
  const error = await verifyBearerToken('Bearer t', options).then(
    () => undefined,
    (e: unknown) => e,
  )
  const response = bearerAuthChallengeResponse(error, options)
  assert.equal(response.status, 403)
  assert.match(response.headers.get('www-authenticate') ?? '', /scope="series:list"/)
})

test('the SDK resource check compares one URL the verifier reports, so it cannot see that aud was a list: why the gate checks aud itself', async () => {
  // A verifier that, like a plain JWT membership test, reports the resource because the list contains it.
  const aud = [RESOURCE, 'https://elsewhere.invalid/mcp']
  const verifier = {
    verifyAccessToken: async (token: string) => ({
      token,
      clientId: 'agent-alpha',
      scopes: [],
      expiresAt: expiresAt(),
      resource: new URL(aud.find((a) => a === RESOURCE) as string),
    }),
  }
  const info = await verifyBearerToken('Bearer t', { verifier, expectedResource: new URL(RESOURCE) })
  assert.equal(info.resource?.href, RESOURCE)
})
