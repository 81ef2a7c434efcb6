// Signed REST requests over https (node:https, trusting a test CA), reporting the certificate the connection saw, and
// callers that keep calling on kept-alive connections while a test swaps certificates or secrets.
import { Agent, request } from 'node:https'
import type { TLSSocket } from 'node:tls'
import { signHeaders } from '@tollgate/signing'

export interface HttpsReply {
  status: number
  text: string
  /** SHA-256 fingerprint of the certificate of the connection that carried the request (AA:BB:…). */
  fingerprint: string
}

/** One signed GET over https: `agent` decides whether the connection is kept (keepAlive) or fresh. */
export function httpsGet(
  base: string,
  path: string,
  o: { secret: string; ca: string; agent: Agent; servername?: string },
): Promise<HttpsReply> {
  const url = new URL(path, base)
  const headers = signHeaders(o.secret, { method: 'GET', host: url.host, path: url.pathname, body: Buffer.alloc(0) })
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', headers, agent: o.agent, ca: o.ca, servername: o.servername ?? 'localhost' },
      (res) => {
        // Read while the socket is attached: a kept-alive socket goes back to the agent at the end.
        const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => {
          text += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, fingerprint }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** The certificate a new handshake gets now (a fresh connection, closed after one request). */
export async function freshFingerprint(base: string, o: { secret: string; ca: string }): Promise<string> {
  const agent = new Agent({ keepAlive: false })
  try {
    return (await httpsGet(base, '/v1/describe', { ...o, agent })).fingerprint
  } finally {
    agent.destroy()
  }
}

export interface Callers {
  /** Requests answered so far, by caller. */
  counts: number[]
  /** Every answer that was not 200, and every request that failed (status 0 with the error's code). */
  failures: { caller: number; status: number; text: string; signedWith: string }[]
  /** Fingerprints each caller's connections showed, in order (deduplicated runs). */
  fingerprints: string[][]
  /** Resolves once every caller has answered at least `n` more requests than when called. */
  more(n: number): Promise<void>
  stop(): Promise<void>
}

/**
 * `n` callers, each on its own kept-alive connection (one socket), calling `path` in a loop on `bases[i % length]`
 * with the secret `secret()` names at each request, until stop().
 */
export function startCallers(
  n: number,
  bases: readonly string[],
  path: string,
  o: { ca: string; secret: () => string },
): Callers {
  let running = true
  const counts = Array.from({ length: n }, () => 0)
  const fingerprints: string[][] = Array.from({ length: n }, () => [])
  const failures: Callers['failures'] = []
  const waiters = new Set<() => void>()
  const loops = counts.map(async (_, i) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const base = bases[i % bases.length] as string
    try {
      while (running) {
        const secret = o.secret()
        try {
          const r = await httpsGet(base, path, { secret, ca: o.ca, agent })
          if (r.status !== 200) failures.push({ caller: i, status: r.status, text: r.text, signedWith: secret })
          const seen = fingerprints[i] as string[]
          if (seen.at(-1) !== r.fingerprint) seen.push(r.fingerprint)
        } catch (error) {
          failures.push({ caller: i, status: 0, text: String((error as { code?: unknown }).code), signedWith: secret })
        }
        counts[i] = (counts[i] as number) + 1
        for (const w of waiters) w()
      }
    } finally {
      agent.destroy()
    }
  })
  return {
    counts,
    failures,
    fingerprints,
    more(m) {
      const target = counts.map((c) => c + m)
      return new Promise((resolve) => {
        const check = () => {
          if (counts.every((c, i) => c >= (target[i] as number))) {
            waiters.delete(check)
            resolve()
          }
        }
        waiters.add(check)
        check()
      })
    },
    async stop() {
      running = false
      await Promise.all(loops)
    },
  }
}
