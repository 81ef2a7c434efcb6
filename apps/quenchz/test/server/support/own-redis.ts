// A redis-server of the test's own on a free loopback port, which the test may stop, start again (with its data, or
// empty), freeze (SIGSTOP) and thaw: the shared Redis on 6379 is never touched. Appendonly with fsync on every write,
// so a stop and start keeps exactly what was charged.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createConnection } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freeLoopbackPort } from '@tollgate/test-support'

/** Why these tests cannot run here, or undefined. With TOLLGATE_REQUIRE_SERVICES=1 a missing server fails instead. */
export const NO_REDIS_SERVER =
  existsSync('/usr/bin/redis-server') || process.env.TOLLGATE_REQUIRE_SERVICES === '1'
    ? undefined
    : 'no redis-server to start'

export interface OwnRedis {
  port: number
  url: string
  /** Starts it (again), keeping its data unless `empty`. Resolves once it accepts connections. */
  start(options?: { empty?: boolean }): Promise<void>
  /** SIGTERM and wait for the exit (the appendonly file is already synced). */
  stop(): Promise<void>
  freeze(): void
  thaw(): void
  /** Stops it for good and removes its directory. */
  dispose(): Promise<void>
}

export async function ownRedis(): Promise<OwnRedis> {
  const port = await freeLoopbackPort()
  const dir = mkdtempSync(join(tmpdir(), 'quenchz-own-redis-'))
  let child: ChildProcess | undefined
  const stop = async () => {
    const running = child
    child = undefined
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return
    const gone = new Promise((r) => running.once('exit', r))
    running.kill('SIGCONT')
    running.kill('SIGTERM')
    await gone
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start({ empty = false } = {}) {
      await stop()
      if (empty) {
        rmSync(dir, { recursive: true, force: true })
        mkdirSync(dir)
      }
      const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--dir', dir]
      child = spawn('redis-server', [...args, '--appendonly', 'yes', '--appendfsync', 'always'], { stdio: 'ignore' })
      for (let i = 0; i < 200; i++) {
        if (await accepts(port)) return
        await sleep(20)
      }
      throw new Error(`redis-server on port ${port} did not start`)
    },
    stop,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
    async dispose() {
      await stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * The bytes each client connection has sent to the server on `port` that the server has not read yet, by the client's
 * port: the kernel's receive queue of each of the server's sockets (/proc/net/tcp), readable while the server is
 * frozen — what was sent to a frozen Redis, which neither it (CLIENT LIST, INFO) nor MONITOR can say then. A socket
 * its client closed meanwhile keeps its unread bytes (CLOSE_WAIT) until the server reads or closes it.
 */
export function unreadBytes(port: number): Map<number, number> {
  const byClient = new Map<number, number>()
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, state, queues] = line.trim().split(/\s+/)
    if (local === undefined || remote === undefined || queues === undefined || state === '0A') continue
    if (Number.parseInt(local.split(':')[1] ?? '', 16) !== port) continue
    byClient.set(Number.parseInt(remote.split(':')[1] ?? '', 16), Number.parseInt(queues.split(':')[1] ?? '', 16))
  }
  return byClient
}

/** Whether Redis answers PING on the port (a frozen or absent one does not, within 200 ms). */
async function accepts(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(200, () => done(false))
    socket.once('error', () => done(false))
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')))
  })
}
