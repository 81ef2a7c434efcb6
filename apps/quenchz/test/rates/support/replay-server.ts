// A loopback HTTP server replaying recorded ECB responses (status, headers, body bytes) by path and query.
import { existsSync, readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'

export interface Reply {
  status: number
  headers: Record<string, string>
  body: Buffer
}

/** A route's reply, or 'hang' to accept the request and never answer (for timeouts). */
export type Route = Reply | 'hang' | (() => Reply | 'hang')

export interface ReplayServer {
  baseUrl: string
  /** Every request's path and query, in arrival order. */
  requests: string[]
  /** Exact path+query routes, consulted before the recordings. */
  routes: Map<string, Route>
  close(): Promise<void>
}

// Hop-by-hop and framing headers are the transport's business, not the recording's.
const SKIP = new Set(['transfer-encoding', 'connection', 'content-length', 'keep-alive'])

/** Loads every present recording of an index.json directory as replies keyed by the recorded path+query. */
export function recordedReplies(dir: string): Map<string, Reply> {
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as Array<{
    name: string
    url: string
    status: number
    response_headers: Record<string, string>
  }>
  const replies = new Map<string, Reply>()
  for (const e of index) {
    const path = join(dir, `${e.name}.body`)
    if (!existsSync(path)) continue
    const url = new URL(e.url)
    const headers = Object.fromEntries(Object.entries(e.response_headers).filter(([k]) => !SKIP.has(k)))
    replies.set(url.pathname + url.search, { status: e.status, headers, body: readFileSync(path) })
    // A query for the same path with other parameters replays a whole-series recording (e.g. the 404 for D.ZZZ).
    if (url.search === '?format=csvdata')
      replies.set(`path:${url.pathname}`, { status: e.status, headers, body: readFileSync(path) })
  }
  return replies
}

export async function startReplayServer(recorded: Map<string, Reply> = new Map()): Promise<ReplayServer> {
  const requests: string[] = []
  const routes = new Map<string, Route>()
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = req.url ?? '/'
    requests.push(target)
    const pathname = new URL(target, 'http://x').pathname
    const route = routes.get(target)
    const found =
      route === undefined
        ? (recorded.get(target) ?? recorded.get(`path:${pathname}`))
        : typeof route === 'function'
          ? route()
          : route
    if (found === 'hang') return
    if (!found) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such replay')
      return
    }
    res.writeHead(found.status, found.headers).end(found.body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    routes,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function reply(status: number, contentType: string, body: string | Buffer): Reply {
  return { status, headers: { 'content-type': contentType }, body: typeof body === 'string' ? Buffer.from(body) : body }
}
