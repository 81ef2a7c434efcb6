// A reverse proxy that strips a path prefix and forwards everything else untouched (the signature too): the
// provider must verify with its public host and the prefix, as a provider behind a real proxy does.
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface StripProxy {
  /** host:port the platform sees. */
  host: string
  /** Where the upstream is; set before the first request. */
  upstream: URL | undefined
  close(): Promise<void>
}

export async function startStripProxy(prefix: string): Promise<StripProxy> {
  const proxy: StripProxy = { host: '', upstream: undefined, close: async () => {} }
  const server = createServer((req, res) => {
    const upstream = proxy.upstream as URL
    const path = req.url ?? '/'
    if (!path.startsWith(`${prefix}/`)) {
      res.writeHead(404).end()
      return
    }
    const out = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: path.slice(prefix.length),
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    out.on('error', () => res.destroy())
    req.pipe(out)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  proxy.host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  proxy.close = async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return proxy
}
