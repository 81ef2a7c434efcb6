// The open budget's configuration with --jwks-url: the defaults, a --budget-policy file and the flags that override
// it, the usage problems (one line naming the flag or the file's field, never a value), and a running quenchz that
// tells an unknown caller from a spent one in its log while answering both with the same bytes.
import assert from 'node:assert/strict'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { main } from '../../src/cli.ts'
import { planFromArgv } from '../../src/server/serve-plan.ts'
import { type CliProcess, startCliProcess } from './support/cli-process.ts'
import { type JwksServer, startJwksServer, TEST_ISSUER } from './support/jwks-server.ts'
import { modernToolCall } from './support/raw-mcp.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'

const RESOURCE = 'https://quenchz.invalid/mcp'
const OVER_BUDGET = 'this caller has spent its share of the upstream budget'
const { scratch, empty } = scratchWithEmptyRecordings('quenchz-policy-')
after(() => rmSync(scratch, { recursive: true, force: true }))

const JWKS = ['--jwks-url', 'https://issuer.example/jwks', '--issuer', 'https://issuer.example']
const plan = (args: string[]) => planFromArgv(args, scratch, {})
// As JSON: the parsed `callers` is a null-prototype object (a sub such as `__proto__` stays a plain key).
const policyOf = (args: string[]) => {
  const { policy } = plan(args) as { policy?: unknown }
  return policy === undefined ? undefined : JSON.parse(JSON.stringify(policy))
}
const problem = (args: string[]) => (plan(args) as { problem?: string }).problem
const file = (name: string, content: string) => {
  const path = join(scratch, name)
  writeFileSync(path, content)
  return path
}

describe('the budget policy of --jwks-url', () => {
  test('defaults for a small team: 60 calls of each caller’s own and a pool of 240, per 60 s; any sub admitted', () => {
    assert.deepEqual(policyOf(JWKS), {
      reserve: 60,
      pool: 240,
      windowSeconds: 60,
      unlistedCallers: 'admit',
      callers: {},
    })
  })

  test('a policy file sets the fields it names; each flag given wins over the file', () => {
    const path = file(
      'team.json',
      JSON.stringify({ reserve: 10, pool: 100, unlistedCallers: 'refuse', callers: { 'ci-bot': { reserve: 500 } } }),
    )
    assert.deepEqual(policyOf([...JWKS, '--budget-policy', path]), {
      reserve: 10,
      pool: 100,
      windowSeconds: 60,
      unlistedCallers: 'refuse',
      callers: { 'ci-bot': { reserve: 500 } },
    })
    const overridden = policyOf([...JWKS, '--budget-policy', path, '--budget-pool', '7', '--budget-window', '3600'])
    assert.deepEqual(overridden, {
      reserve: 10,
      pool: 7,
      windowSeconds: 3600,
      unlistedCallers: 'refuse',
      callers: { 'ci-bot': { reserve: 500 } },
    })
    assert.deepEqual(policyOf([...JWKS, '--caller-reserve', '0', '--budget-pool', '5']), {
      reserve: 0,
      pool: 5,
      windowSeconds: 60,
      unlistedCallers: 'admit',
      callers: {},
    })
  })

  test('with --tokens-file the seed’s budget stays: no policy, and the policy flags are refused rather than ignored', () => {
    const tokens = ['--tokens-file', join(scratch, 't.json')]
    assert.equal(policyOf(tokens), undefined)
    for (const [flag, value] of [
      ['--budget-policy', 'p.json'],
      ['--caller-reserve', '1'],
      ['--budget-pool', '1'],
      ['--budget-window', '1'],
    ] as const)
      assert.equal(problem([...tokens, flag, value]), `${flag} needs --jwks-url`)
  })

  test('a bad policy is one line naming the flag or the file’s field, never a value or a caller’s sub', () => {
    const cases: Array<[string[], string]> = [
      [['--caller-reserve=-1'], '--caller-reserve must be a whole number from 0 to 1000000000'],
      [['--budget-pool', 'lots'], '--budget-pool must be a whole number from 0 to 1000000000'],
      [['--budget-window', '0'], '--budget-window must be a whole number from 1 to 86400'],
      [
        ['--caller-reserve', '0', '--budget-pool', '0'],
        'the budget policy: reserve and pool are both 0: the policy would admit nothing',
      ],
      [['--budget-policy', join(scratch, 'missing.json')], '--budget-policy: cannot read the file (ENOENT)'],
      [['--budget-policy', file('not.json', '{"reserve": hunter2}')], '--budget-policy: the file is not JSON'],
      [['--budget-policy', file('list.json', '[1]')], '--budget-policy: a budget policy must be a JSON object'],
      [
        ['--budget-policy', file('neg.json', '{"reserve": -5}')],
        '--budget-policy: reserve must be an integer from 0 to 1000000000',
      ],
      [
        ['--budget-policy', file('window.json', '{"windowSeconds": 1.5}')],
        '--budget-policy: windowSeconds must be an integer from 1 to 86400',
      ],
      [
        ['--budget-policy', file('unlisted.json', '{"unlistedCallers": "hunter2"}')],
        '--budget-policy: unlistedCallers must be "admit" or "refuse"',
      ],
      [
        [
          '--budget-policy',
          file('entry.json', '{"callers": {"a": {"reserve": 1}, "hunter2@example": {"reserve": "x"}}}'),
        ],
        '--budget-policy: callers (entry 2).reserve must be an integer from 0 to 1000000000',
      ],
      [
        ['--budget-policy', file('typo.json', '{"reserv": 1}')],
        '--budget-policy: unknown field in the budget policy; the fields are reserve, pool, windowSeconds, unlistedCallers, callers',
      ],
      [
        ['--budget-policy', file('nobody.json', '{"unlistedCallers": "refuse"}')],
        '--budget-policy: unlistedCallers "refuse" needs at least one caller in callers',
      ],
    ]
    for (const [args, expected] of cases) assert.equal(problem([...JWKS, ...args]), expected, args.join(' '))
  })

  test('a key given twice in one object is refused (not the last one silently winning), naming where, never the value or the sub', () => {
    const cases: Array<[string, string]> = [
      ['{"reserve": 5, "pool": 10, "reserve": 99999}', 'reserve'],
      ['{"callers": {"alice": {"reserve": 1}, "bob": {"reserve": 2}, "alice": {"reserve": 77}}}', 'callers (entry 3)'],
      ['{"callers": {"alice": {"reserve": 1, "reserve": 77}}}', 'callers (entry 1).reserve'],
      // Escapes are compared after unescaping: "\u0061lice" is alice.
      ['{"callers": {"alice": {"reserve": 1}, "\\u0061lice": {"reserve": 77}}}', 'callers (entry 2)'],
      ['{"reserve": 5, "hunter2": 1, "hunter2": 2}', 'the policy (member 3)'],
      ['{"callers": {"x": {"hunter2": [1, {"a": 1, "a": 2}]}}}', 'callers (entry 1) (member 1)[1] (member 2)'],
    ]
    for (const [json, path] of cases) {
      const said = problem([...JWKS, '--budget-policy', file('twice.json', json)])
      assert.equal(said, `--budget-policy: ${path} is given twice in one object (duplicate key)`, json)
      for (const secret of ['alice', 'hunter2', '99999', '77']) assert.ok(!said?.includes(secret), `${json}: ${said}`)
    }
    // The same file with each key once is accepted.
    assert.deepEqual(
      policyOf([...JWKS, '--budget-policy', file('once.json', '{"reserve": 5, "callers": {"alice": {"reserve": 1}}}')])
        ?.callers,
      { alice: { reserve: 1 } },
    )
  })

  test('the Redis flags: --budget-redis-timeout-ms (default 500) and --budget-state-lost (default reseed) need --budget-redis', () => {
    const redis = [...JWKS, '--budget-redis', 'redis://127.0.0.1:6379']
    assert.deepEqual(
      (({ redisTimeoutMs, onLostState }) => ({ redisTimeoutMs, onLostState }))(
        plan(redis) as { redisTimeoutMs: number; onLostState: string },
      ),
      { redisTimeoutMs: 500, onLostState: 'reseed' },
    )
    const set = plan([...redis, '--budget-redis-timeout-ms', '250', '--budget-state-lost', 'refuse'])
    assert.equal((set as { redisTimeoutMs: number }).redisTimeoutMs, 250)
    assert.equal((set as { onLostState: string }).onLostState, 'refuse')
    assert.equal(
      problem([...JWKS, '--budget-redis-timeout-ms', '250']),
      '--budget-redis-timeout-ms needs --budget-redis',
    )
    assert.equal(problem([...JWKS, '--budget-state-lost', 'refuse']), '--budget-state-lost needs --budget-redis')
    assert.equal(
      problem([...redis, '--budget-redis-timeout-ms', '5']),
      '--budget-redis-timeout-ms must be a whole number from 10 to 60000',
    )
    assert.equal(problem([...redis, '--budget-state-lost', 'ignore']), '--budget-state-lost must be reseed or refuse')
  })

  test('the CLI exits 2 with the line and where help is', async () => {
    const lines: string[] = []
    const path = file('exit.json', '{"pool": 1e99}')
    const code = await main([...JWKS, '--budget-policy', path], {
      stderr: (l) => lines.push(l),
      serve: false,
      cwd: scratch,
    })
    assert.equal(code, 2)
    assert.deepEqual(lines, [
      'quenchz: --budget-policy: pool must be an integer from 0 to 1000000000',
      'see quenchz --help',
    ])
  })
})

describe('an unknown caller and a spent one: the same answer, different log outcomes', () => {
  let jwks: JwksServer
  let quenchz: CliProcess
  before(async () => {
    jwks = await startJwksServer()
    // Only listed callers are served: alice holds 2 calls, and there is no pool.
    const policy = file(
      'listed.json',
      JSON.stringify({ reserve: 0, pool: 0, unlistedCallers: 'refuse', callers: { alice: { reserve: 2 } } }),
    )
    quenchz = await startCliProcess(
      [
        ...['--port', '0', '--budget-clock', 'frozen', '--jwks-url', jwks.url, '--issuer', TEST_ISSUER],
        ...['--source', 'recordings', '--recordings', empty, '--budget-policy', policy],
      ],
      scratch,
    )
  })
  after(async () => {
    await quenchz?.stop()
    await jwks?.close()
  })

  /** A 2026-07-28 tools/call's whole answer body, bytes as sent. */
  const call = async (token: string) => {
    const res = await fetch(quenchz.url, {
      method: 'POST',
      ...modernToolCall(token, 7, 'calendar.why', { day: '2026-04-03' }),
    })
    return { status: res.status, text: await res.text() }
  }

  test('mallory (not listed) and alice (spent) get the same bytes; the log says unknown-caller and over-budget', async () => {
    const alice = await jwks.sign('alice', RESOURCE)
    const mallory = await jwks.sign('mallory', RESOURCE)
    for (let i = 0; i < 2; i++) assert.doesNotMatch((await call(alice)).text, /spent its share/)
    const spent = await call(alice)
    const unknown = await call(mallory)
    assert.equal(spent.status, 200)
    assert.ok(spent.text.includes(OVER_BUDGET), spent.text)
    assert.deepEqual(unknown, spent)
    let refused: Array<Record<string, unknown>> = []
    for (let i = 0; i < 200 && refused.length < 2; i++) {
      refused = quenchz.logs.filter((l) => l.msg === 'call refused')
      await sleep(10)
    }
    assert.deepEqual(
      refused.map((l) => [l.sub, l.outcome, l.level]),
      [
        ['alice', 'over-budget', 40],
        ['mallory', 'unknown-caller', 40],
      ],
    )
    // Nothing was held or charged for mallory: no `left` to report.
    assert.equal(refused[1]?.left, null)
  })
})
