// Highly available Redis of a test's own, on free loopback ports in a temp folder (the shared Redis on 6379 is never
// touched): a master with one replica watched by three sentinels, or a Redis Cluster of three masters with one
// replica each. A test kills a master with SIGKILL and watches the promotion. Every wait is bounded by tries, and
// `dispose` kills every process it started and removes the folder.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { freeLoopbackPort } from './prometheus.js'

const run = promisify(execFile)

/**
 * Why Redis Sentinel and Cluster tests cannot run here (no redis-server or redis-cli), or undefined. With
 * TOLLGATE_REQUIRE_SERVICES=1 they run anyway, and fail.
 */
export const NO_REDIS_HA =
  (existsSync('/usr/bin/redis-server') && existsSync('/usr/bin/redis-cli')) ||
  process.env.TOLLGATE_REQUIRE_SERVICES === '1'
    ? undefined
    : 'no redis-server and redis-cli to start a Sentinel set or a Cluster'

/** One redis-server process of the set. */
export interface RedisNodeProcess {
  port: number
  child: ChildProcess
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>
}

/** Sends one command with redis-cli to a port; its output, trimmed. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 5000 })
  return stdout.trim()
}

/** Asks every 50 ms until `check` holds (a throw counts as not yet), at most `tries` times. */
async function until(what: string, check: () => Promise<boolean>, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check().catch(() => false)) return
    await sleep(50)
  }
  throw new Error(`never happened: ${what}`)
}

function startNode(dir: string, port: number, args: string[]): RedisNodeProcess {
  const child = spawn('redis-server', args, { cwd: dir, stdio: 'ignore' })
  return {
    port,
    child,
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const gone = new Promise((r) => child.once('exit', r))
      child.kill('SIGKILL')
      await gone
    },
  }
}

const answers = (port: number) => async () => (await redisCli(port, 'PING')) === 'PONG'

/** A master, its replicas (one by default) and three sentinels watching them as `master`. */
export interface RedisSentinelSet {
  /** The master set's name the sentinels know. */
  master: string
  sentinels: Array<{ host: string; port: number }>
  /** `127.0.0.1:P,127.0.0.1:Q,…` for --budget-redis-sentinels. */
  sentinelList: string
  nodes: RedisNodeProcess[]
  /** The port of the current master, as the sentinels say. */
  masterPort(): Promise<number>
  /** Resolves once the sentinels name a master other than `port` and it answers as a master. */
  promotedFrom(port: number): Promise<number>
  dispose(): Promise<void>
}

/**
 * Starts the set and waits until the replica is in sync and every sentinel knows the replica and the other
 * sentinels. `downAfterMs`: how long the master must be silent before the sentinels call it down.
 */
export async function startRedisSentinelSet(
  options: { downAfterMs?: number; replicas?: number } = {},
): Promise<RedisSentinelSet> {
  const replicaCount = options.replicas ?? 1
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sentinel-'))
  const master = 'budget'
  const processes: RedisNodeProcess[] = []
  const dispose = async () => {
    await Promise.all(processes.map((p) => p.kill()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const masterPort = await freeLoopbackPort()
    const common = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir]
    processes.push(startNode(dir, masterPort, ['--port', String(masterPort), ...common]))
    await until('the master answers', answers(masterPort))
    for (let i = 0; i < replicaCount; i++) {
      const replicaPort = await freeLoopbackPort()
      const replicaArgs = ['--port', String(replicaPort), ...common, '--replicaof', '127.0.0.1', String(masterPort)]
      processes.push(startNode(dir, replicaPort, replicaArgs))
      await until('the replica is in sync', async () =>
        (await redisCli(replicaPort, 'INFO', 'replication')).includes('master_link_status:up'),
      )
    }
    const sentinels: Array<{ host: string; port: number }> = []
    for (let i = 0; i < 3; i++) {
      const port = await freeLoopbackPort()
      const file = join(dir, `sentinel-${port}.conf`)
      writeFileSync(
        file,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${master} 127.0.0.1 ${masterPort} 2`,
          `sentinel down-after-milliseconds ${master} ${options.downAfterMs ?? 1000}`,
          `sentinel failover-timeout ${master} 10000`,
          `sentinel parallel-syncs ${master} 1`,
          '',
        ].join('\n'),
      )
      processes.push(startNode(dir, port, [file, '--sentinel']))
      sentinels.push({ host: '127.0.0.1', port })
    }
    for (const s of sentinels) {
      await until('every sentinel knows the replica and the other two', async () => {
        const info = await redisCli(s.port, 'SENTINEL', 'MASTER', master)
        const lines = info.split('\n')
        const field = (name: string) => lines[lines.indexOf(name) + 1]
        return field('num-slaves') === String(replicaCount) && field('num-other-sentinels') === '2'
      })
    }
    const masterNow = async () => {
      for (const s of sentinels) {
        try {
          const out = (await redisCli(s.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', master)).split('\n')
          if (out[1] !== undefined) return Number(out[1])
        } catch {}
      }
      throw new Error('no sentinel answers')
    }
    return {
      master,
      sentinels,
      sentinelList: sentinels.map((s) => `${s.host}:${s.port}`).join(','),
      nodes: processes,
      masterPort: masterNow,
      async promotedFrom(port) {
        let now = port
        await until('the sentinels promote the replica', async () => {
          now = await masterNow()
          return now !== port && (await redisCli(now, 'ROLE')).startsWith('master')
        })
        return now
      },
      dispose,
    }
  } catch (error) {
    await dispose()
    throw error
  }
}

/** Three masters with one replica each. */
export interface RedisClusterSet {
  /** `127.0.0.1:P,…` (every node) for --budget-redis-cluster. */
  nodeList: string
  nodes: RedisNodeProcess[]
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>
  /** Resolves once a node other than `port` serves `key`'s slot as a master and the cluster says ok. */
  promotedFrom(key: string, port: number): Promise<number>
  dispose(): Promise<void>
}

/** Starts six nodes, joins them with `redis-cli --cluster create … --cluster-replicas 1`, waits for state ok. */
export async function startRedisCluster(options: { nodeTimeoutMs?: number } = {}): Promise<RedisClusterSet> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cluster-'))
  const processes: RedisNodeProcess[] = []
  const dispose = async () => {
    await Promise.all(processes.map((p) => p.kill()))
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    for (let i = 0; i < 6; i++) {
      const port = await freeLoopbackPort()
      // The cluster bus on a port of its own: port + 10000 may be past 65535 or taken.
      const bus = await freeLoopbackPort()
      const args = ['--port', String(port), '--cluster-port', String(bus), '--bind', '127.0.0.1']
      args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`)
      args.push('--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1000))
      args.push('--save', '', '--appendonly', 'no', '--dir', dir)
      processes.push(startNode(dir, port, args))
    }
    for (const p of processes) await until('a cluster node answers', answers(p.port))
    const addresses = processes.map((p) => `127.0.0.1:${p.port}`)
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], {
      timeout: 30_000,
    })
    const ok = async (port: number) => (await redisCli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')
    for (const p of processes) await until('the cluster says ok on every node', () => ok(p.port))
    // A replica that has not synced yet would not be promoted: wait until each is linked to its master.
    for (const p of processes) {
      await until('every replica is in sync with its master', async () => {
        const info = await redisCli(p.port, 'INFO', 'replication')
        return info.includes('role:master') || info.includes('master_link_status:up')
      })
    }
    const masterOf = async (key: string) => {
      const live = processes.find((p) => p.child.exitCode === null && p.child.signalCode === null)
      const slot = Number(await redisCli(live?.port as number, 'CLUSTER', 'KEYSLOT', key))
      for (const p of processes) {
        if (p.child.exitCode !== null || p.child.signalCode !== null) continue
        try {
          if (!(await redisCli(p.port, 'ROLE')).startsWith('master')) continue
          const nodes = await redisCli(p.port, 'CLUSTER', 'NODES')
          const me = nodes.split('\n').find((l) => l.includes('myself'))
          if (me === undefined) continue
          for (const range of me.split(' ').slice(8)) {
            const [a, b] = range.split('-').map(Number)
            if (a !== undefined && slot >= a && slot <= (b ?? a)) return p.port
          }
        } catch {}
      }
      throw new Error(`no master serves slot ${slot}`)
    }
    return {
      nodeList: addresses.join(','),
      nodes: processes,
      masterOf,
      async promotedFrom(key, port) {
        let now = port
        await until('a replica is promoted and the cluster says ok', async () => {
          now = await masterOf(key)
          return now !== port && (await ok(now))
        })
        return now
      },
      dispose,
    }
  } catch (error) {
    await dispose()
    throw error
  }
}
