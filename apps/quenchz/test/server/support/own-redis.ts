// A redis-server of the test's own on a free loopback port, which the test may stop, start again (with its data, or
// empty), freeze (SIGSTOP) and thaw: the shared Redis on 6379 is never touched. Appendonly with fsync on every write,
// so a stop and start keeps exactly what was charged.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
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
