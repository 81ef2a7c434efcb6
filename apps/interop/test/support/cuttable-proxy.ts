// A TCP forwarder on a loopback port that a test can cut: every connection through it is destroyed and new ones are
// closed at once, as a network partition between one replica and its database would look; `restore` forwards again.
import { createServer, type Socket, connect as tcpConnect } from 'node:net'

export interface CuttableProxy {
  port: number
  cut(): void
  restore(): void
  close(): Promise<void>
}

export async function startCuttableProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<CuttableProxy> {
  let open = true
  const sockets = new Set<Socket>()
  const track = (s: Socket) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
    s.on('error', () => {})
  }
  const server = createServer((client) => {
    track(client)
    if (!open) {
      client.destroy()
      return
    }
    const upstream = tcpConnect(targetPort, targetHost)
    track(upstream)
    client.pipe(upstream).pipe(client)
    client.once('close', () => upstream.destroy())
    upstream.once('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as { port: number }).port,
    cut: () => {
      open = false
      for (const s of sockets) s.destroy()
    },
    restore: () => {
      open = true
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
