// The budget's Redis flags for high availability: --budget-redis-sentinels with --budget-redis-master (Sentinel),
// --budget-redis-cluster (Cluster), each exclusive with --budget-redis and with each other. Usage errors exit 2
// naming the flags, never echoing a value.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, describe, test } from 'node:test'
import { main } from '../../src/cli.ts'
import { planFromArgv } from '../../src/server/serve-plan.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'

const { scratch } = scratchWithEmptyRecordings('quenchz-ha-options-')
after(() => rmSync(scratch, { recursive: true, force: true }))

const BASE = ['--tokens-file', 't.json']
const SENTINELS = ['--budget-redis-sentinels', '127.0.0.1:26379,sentinel-b:26380,[::1]:26381']

async function usage(args: string[]): Promise<{ code: number | 'serving'; first: string; all: string }> {
  const lines: string[] = []
  const code = await main([...BASE, ...args], { stderr: (l) => lines.push(l), serve: false, cwd: scratch })
  const all = lines.join('\n')
  return { code, first: all.split('\n')[0] as string, all }
}

const plan = (args: string[]) => planFromArgv([...BASE, ...args], scratch, {}) as { redis?: unknown }

describe('--budget-redis-sentinels / --budget-redis-master / --budget-redis-cluster', () => {
  test('Sentinel: the sentinels (IPv6 in brackets) and the master set name make the plan', () => {
    assert.deepEqual(plan([...SENTINELS, '--budget-redis-master', 'budget']).redis, {
      kind: 'sentinel',
      sentinels: [
        { host: '127.0.0.1', port: 26379 },
        { host: 'sentinel-b', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      master: 'budget',
    })
  })

  test('Cluster: the seed nodes make the plan', () => {
    assert.deepEqual(plan(['--budget-redis-cluster', '10.0.0.1:7000,10.0.0.2:7001']).redis, {
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
    })
  })

  const refused: Array<[string, string[], string]> = [
    [
      'a URL and sentinels',
      ['--budget-redis', 'redis://:hunter2@127.0.0.1:6379', ...SENTINELS, '--budget-redis-master', 'budget'],
      '--budget-redis and --budget-redis-sentinels exclude each other: give one',
    ],
    [
      'a URL and a cluster',
      ['--budget-redis', 'redis://:hunter2@127.0.0.1:6379', '--budget-redis-cluster', '127.0.0.1:7000'],
      '--budget-redis and --budget-redis-cluster exclude each other: give one',
    ],
    [
      'sentinels and a cluster',
      [...SENTINELS, '--budget-redis-master', 'budget', '--budget-redis-cluster', '127.0.0.1:7000'],
      '--budget-redis-sentinels and --budget-redis-cluster exclude each other: give one',
    ],
    ['sentinels without a master name', SENTINELS, '--budget-redis-sentinels needs --budget-redis-master'],
    [
      'a master name without sentinels',
      ['--budget-redis-master', 'budget'],
      '--budget-redis-master needs --budget-redis-sentinels',
    ],
    [
      'a master name that is not a name',
      [...SENTINELS, '--budget-redis-master', 'hunter2 secret'],
      '--budget-redis-master must be 1 to 100 letters, digits, dots, dashes or underscores',
    ],
    [
      'a sentinel without a port',
      ['--budget-redis-sentinels', 'hunter2.example', '--budget-redis-master', 'budget'],
      '--budget-redis-sentinels must be a comma-separated list of HOST:PORT (1 to 64)',
    ],
    [
      'a cluster node on port 0',
      ['--budget-redis-cluster', '127.0.0.1:0'],
      '--budget-redis-cluster must be a comma-separated list of HOST:PORT (1 to 64)',
    ],
    [
      'an empty node in the list',
      ['--budget-redis-cluster', '127.0.0.1:7000,'],
      '--budget-redis-cluster must be a comma-separated list of HOST:PORT (1 to 64)',
    ],
    [
      '--budget-redis-replicas without a Redis',
      ['--budget-redis-replicas', '1'],
      '--budget-redis-replicas needs --budget-redis',
    ],
    [
      '--budget-redis-replicas past 16',
      ['--budget-redis-cluster', '127.0.0.1:7000', '--budget-redis-replicas', '17'],
      '--budget-redis-replicas must be a whole number from 0 to 16',
    ],
    [
      'a brace in the prefix on a cluster',
      ['--budget-redis-cluster', '127.0.0.1:7000', '--budget-prefix', 'q{x}:'],
      '--budget-prefix may not hold { or } with --budget-redis-cluster',
    ],
  ]
  for (const [what, args, message] of refused) {
    test(`${what}: exit 2 naming the flags, no value echoed`, async () => {
      const { code, first, all } = await usage(args)
      assert.equal(code, 2)
      assert.equal(first, `quenchz: ${message}`)
      assert.doesNotMatch(all, /hunter2/)
    })
  }

  test('the prefix, timeout and state-lost flags are accepted with sentinels or a cluster', () => {
    const tuned = ['--budget-prefix', 'q:', '--budget-redis-timeout-ms', '250', '--budget-state-lost', 'refuse']
    for (const target of [
      [...SENTINELS, '--budget-redis-master', 'budget'],
      ['--budget-redis-cluster', 'n:7000'],
    ]) {
      const p = plan([...target, ...tuned]) as { problem?: string; prefix?: string; redisTimeoutMs?: number }
      assert.equal(p.problem, undefined)
      assert.equal(p.prefix, 'q:')
      assert.equal(p.redisTimeoutMs, 250)
    }
  })

  test('--budget-redis-replicas: 0 by default, N with any budget Redis', () => {
    const replicas = (args: string[]) => (plan(args) as { redisReplicas?: number }).redisReplicas
    assert.equal(replicas(['--budget-redis', 'redis://127.0.0.1:6379']), 0)
    assert.equal(replicas(['--budget-redis', 'redis://127.0.0.1:6379', '--budget-redis-replicas', '2']), 2)
    assert.equal(replicas([...SENTINELS, '--budget-redis-master', 'b', '--budget-redis-replicas', '1']), 1)
    assert.equal(replicas(['--budget-redis-cluster', 'n:7000', '--budget-redis-replicas', '1']), 1)
  })
})
