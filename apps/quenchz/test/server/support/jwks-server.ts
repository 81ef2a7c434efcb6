// A loopback JWKS endpoint with one RS256 key, and tokens signed by it for any sub: the smallest "real issuer"
// quenchz's --jwks-url mode can verify against (the full OAuth flow is authorization-server.test.ts).
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'

export const TEST_ISSUER = 'https://issuer.example.invalid'

export interface JwksServer {
  url: string
  /** A token for `sub` with `scope` (default rates:read) and `aud`, valid 15 minutes. */
  sign(sub: string, aud: string, scope?: string): Promise<string>
  /** A token for `sub` and `aud` carrying exactly `claims` besides the registered ones (e.g. Okta's `scp` array). */
  signClaims(sub: string, aud: string, claims: Record<string, unknown>): Promise<string>
  close(): Promise<void>
}

export async function startJwksServer(): Promise<JwksServer> {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const kid = randomUUID()
  const body = JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] })
  const server = createServer((req, res) => {
    res.writeHead(req.url === '/jwks.json' ? 200 : 404, { 'content-type': 'application/json' })
    res.end(req.url === '/jwks.json' ? body : '{}')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const signClaims = async (sub: string, aud: string, claims: Record<string, unknown>): Promise<string> => {
    const now = Math.floor(Date.now() / 1000)
    return await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(TEST_ISSUER)
      .setAudience(aud)
      .setIssuedAt(now)
      .setExpirationTime(now + 900)
      .sign(privateKey)
  }
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`,
    sign: (sub, aud, scope = 'rates:read') => signClaims(sub, aud, { scope }),
    signClaims,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
