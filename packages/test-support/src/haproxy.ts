// Debian's haproxy as a child process of a test or a benchmark, with the configuration the caller wrote: checked
// (`haproxy -c`), run in the foreground (`-db`), ready once it listens on every port asked, stopped with SIGTERM.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export interface RunningHaproxy {
  /** The haproxy process (its pid for CPU accounting). */
  child: ChildProcess
  /** SIGTERM, then resolves once it exited; removes the folder it made for its configuration. */
  stop(): Promise<void>
}

export interface HaproxyOptions {
  /** The whole configuration file's text. */
  config: string
  /** The loopback ports its frontends bind: ready once each accepts a connection. */
  ports: readonly number[]
  /** Where to write haproxy.cfg (left in place); by default a temporary folder of its own, removed by `stop()`. */
  dir?: string
}

/**
 * Starts haproxy on `config` and resolves once every port in `ports` accepts a connection (at most 10 s). Throws with
 * haproxy's own words when it refuses the configuration, exits, or never listens. The servers behind it may not be
 * checked up yet: a caller that needs them waits for an answer through it.
 */
export async function startHaproxy(options: HaproxyOptions): Promise<RunningHaproxy> {
  const own = options.dir === undefined ? mkdtempSync(join(tmpdir(), 'tollgate-haproxy-')) : undefined
  const file = join(options.dir ?? (own as string), 'haproxy.cfg')
  const removeOwn = () => {
    if (own !== undefined) rmSync(own, { recursive: true, force: true })
  }
  writeFileSync(file, options.config)
  const check = spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' })
  if (check.status !== 0) {
    removeOwn()
    throw new Error(`haproxy refused the configuration: ${check.error?.message ?? ''}${check.stdout}${check.stderr}`)
  }
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    err += c
  })
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
    removeOwn()
  }
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop()
      throw new Error(`haproxy exited: ${err}`)
    }
    if ((await Promise.all(options.ports.map(accepts))).every(Boolean)) break
    if (i === 200) {
      await stop()
      throw new Error(`haproxy did not listen on ${options.ports.join(', ')}: ${err}`)
    }
    await sleep(50)
  }
  return { child, stop }
}

async function accepts(port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
