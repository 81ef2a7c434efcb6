// quenchz as a service people run, through its real CLI process: renewed tokens without a restart, the hosts it
// answers for, one log line per call (never a token), and nothing left behind when it is stopped.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { existsSync, rmSync, statSync } from 'node:fs'
import { request } from 'node:http'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { manualClock, RedisBudgetStore } from '@tollgate/gate'
import { probeRedis, type RedisProbe } from '@tollgate/test-support'
import { main } from '../../src/cli.ts'
import { quenchzBudget } from '../../src/server/start-quenchz.ts'
import { type CliProcess, startCliProcess, tokensOf } from './support/cli-process.ts'
import { connect, firstText } from './support/clients.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'

const { scratch, empty } = scratchWithEmptyRecordings('quenchz-service-')
const children: ChildProcess[] = []
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  rmSync(scratch, { recursive: true, force: true })
})

/** `quenchz --port 0` serving the empty recordings, its tokens written to `tokensPath`, with `flags`. */
async function serve(tokensPath: string, flags: string[] = []): Promise<CliProcess> {
  const cli = await startCliProcess(
    ['--port', '0', '--tokens-file', tokensPath, ...flags, '--source', 'recordings', '--recordings', empty],
    scratch,
  )
  children.push(cli.child)
  return cli
}

/** A GET with a chosen Host header (fetch cannot set one). */
function getWithHost(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => {
        body += c
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** The server's log lines arrive through a pipe, after the answer they describe: wait (bounded) for a line. */
async function logged(server: CliProcess, text: string): Promise<void> {
  for (let i = 0; i < 200 && !server.err().includes(text); i++) await sleep(10)
}

/** The `call` and `call refused` lines logged so far, in order. */
const callLines = (server: CliProcess) =>
  server
    .err()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'call' || l.msg === 'call refused')

async function remint(path: string, extra: string[] = []) {
  const lines: string[] = []
  const code = await main(['tokens', '--tokens-file', path, ...extra], { stderr: (l) => lines.push(l), cwd: scratch })
  return { code, err: lines.join('\n') }
}

describe('tokens: a documented lifetime, renewed without a restart', () => {
  test('an expired token is the same 401, logged at warn with its reason only; `quenchz tokens` mints ones that work', async () => {
    const path = join(scratch, 'short.json')
    const server = await serve(path, ['--token-lifetime', '1'])
    const key = `${path}.key.json`
    assert.equal(statSync(key).mode & 0o777, 0o600, 'the key beside the tokens file is owner-only')
    const old = tokensOf(path).quietForThisResource as string
    // `exp` is whole seconds and the check has no leeway: past two seconds a one-second token has expired.
    await sleep(2100)
    const refused = await fetch(server.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${old}`, 'content-type': 'application/json', accept: 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    })
    assert.equal(refused.status, 401)
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/)
    await logged(server, '"token refused"')
    const warned = server
      .err()
      .split('\n')
      .filter((l) => l.includes('"token refused"'))
    assert.equal(warned.length, 1, server.err())
    const line = JSON.parse(warned[0] as string) as Record<string, unknown>
    assert.equal(line.level, 40)
    assert.equal(line.reason, 'ERR_GATE_TOKEN_EXPIRED')
    assert.ok(!server.err().includes(old.split('.')[2] as string), 'no token in the log')

    assert.deepEqual(await remint(path, ['--token-lifetime', '600']), {
      code: 0,
      err: `tokens written to ${path} (valid 600 s)`,
    })
    assert.equal(statSync(path).mode & 0o777, 0o600)
    const fresh = tokensOf(path).quietForThisResource as string
    assert.notEqual(fresh, old)
    const client = await connect('v2-modern', server.url, fresh)
    const why = await client.callTool('calendar.why', { day: '2026-04-03' })
    assert.equal(why.isError, undefined, firstText(why))
    await client.close()

    // Stopped by a signal, it removes the key it kept: nothing left that could mint; a graceful stop exits 0.
    server.child.kill('SIGTERM')
    assert.equal(await server.exited, 0)
    assert.equal(existsSync(key), false)
    assert.match((await remint(path)).err, /^quenchz tokens: no signing key at .*: is quenchz serving/)
  })

  test('`quenchz tokens` with no server behind the file exits 1 and says so; with a bad lifetime exits 2', async () => {
    const path = join(scratch, 'nobody.json')
    assert.deepEqual(await remint(path), {
      code: 1,
      err: `quenchz tokens: no signing key at ${path}.key.json: is quenchz serving with this --tokens-file?`,
    })
    assert.deepEqual(await remint(path, ['--token-lifetime', '0']), {
      code: 2,
      err: 'quenchz tokens: --token-lifetime must be a whole number from 1 to 604800\nsee quenchz tokens --help',
    })
  })
})

describe('the hosts it answers for', () => {
  test('a loopback bind answers localhost and 127.0.0.1 with any port; a foreign Host gets 421', async () => {
    const server = await serve(join(scratch, 'hosts.json'))
    const path = '/.well-known/oauth-protected-resource/mcp'
    for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, 'localhost', 'LOCALHOST']) {
      assert.equal((await getWithHost(server.port, path, host)).status, 200, host)
    }
    assert.equal((await getWithHost(server.port, path, 'somewhere-else.invalid')).status, 421)
    server.child.kill('SIGTERM')
    await server.exited
  })

  test('--public-url sets the resource, the metadata and the tokens’ aud, and its Host; --allowed-host adds one', async () => {
    const path = join(scratch, 'public.json')
    const server = await serve(path, [
      '--public-url',
      'https://rates.example.test/mcp',
      '--allowed-host',
      'gateway.internal',
    ])
    assert.match(server.err(), /listening on \S+ as https:\/\/rates\.example\.test\/mcp /)
    const metadata = await getWithHost(server.port, '/.well-known/oauth-protected-resource/mcp', 'rates.example.test')
    assert.equal(metadata.status, 200)
    assert.equal((JSON.parse(metadata.body) as { resource: string }).resource, 'https://rates.example.test/mcp')
    for (const host of ['gateway.internal', 'gateway.internal:8443', `127.0.0.1:${server.port}`]) {
      assert.equal((await getWithHost(server.port, '/.well-known/oauth-protected-resource/mcp', host)).status, 200)
    }
    assert.equal(
      (await getWithHost(server.port, '/.well-known/oauth-protected-resource/mcp', 'elsewhere.example')).status,
      421,
    )
    const tokens = tokensOf(path)
    const claims = JSON.parse(
      Buffer.from((tokens.greedyForThisResource as string).split('.')[1] as string, 'base64url').toString('utf8'),
    ) as { aud: string }
    assert.equal(claims.aud, 'https://rates.example.test/mcp')
    const client = await connect('v1', server.url, tokens.greedyForThisResource as string)
    assert.equal((await client.callTool('calendar.why', { day: '2026-04-03' })).isError, undefined)
    await client.close()
    server.child.kill('SIGINT')
    assert.equal(await server.exited, 0)
  })
})

describe('logs', () => {
  test('one info line per served call with caller, tool, outcome and duration; refusals at warn; no token or argument', async () => {
    const path = join(scratch, 'logs.json')
    const server = await serve(path)
    const tokens = tokensOf(path)
    const client = await connect('v2-modern', server.url, tokens.quietForThisResource as string)
    await client.callTool('calendar.why', { day: '2026-04-03' })
    await client.callTool('series.cataloguz', { secretish: 'argument-value-7f3a' })
    await client.close()
    await logged(server, '"call refused"')
    const calls = callLines(server)
    assert.equal(calls.length, 2, server.err())
    assert.deepEqual(
      { ...calls[0], time: 0, ms: 0 },
      {
        level: 30,
        time: 0,
        service: 'quenchz',
        sub: 'agent-beta',
        tool: 'calendar.why',
        outcome: 'served',
        charged: 'reserve',
        left: { reserve: 14, spare: 30 },
        ms: 0,
        msg: 'call',
      },
    )
    assert.equal(typeof calls[0]?.ms, 'number')
    assert.deepEqual(
      { level: calls[1]?.level, sub: calls[1]?.sub, tool: calls[1]?.tool, outcome: calls[1]?.outcome },
      { level: 40, sub: 'agent-beta', tool: null, outcome: 'no-such-tool' },
    )
    for (const secret of ['series.cataloguz', 'argument-value-7f3a', '2026-04-03', ...Object.values(tokens)]) {
      assert.ok(!server.err().includes(secret), 'nothing the caller sent appears in the log')
    }
    server.child.kill('SIGTERM')
    await server.exited
  })
})

describe('logs: the budget left after each call, from the store that spent it', () => {
  let probe: RedisProbe
  after(async () => {
    await probe?.cleanup()
  })
  for (const store of ['memory', 'redis'] as const) {
    test(`${store} store: every call line names the caller's reserve and the shared spare left after its charge`, async (t) => {
      const extra: string[] = []
      if (store === 'redis') {
        probe = await probeRedis('quenchz-log-test')
        if (probe.skip) return t.skip(probe.skip)
        extra.push('--budget-redis', 'redis://127.0.0.1:6379', '--budget-prefix', probe.prefix)
        // Another replica (this process, same Redis, prefix and frozen clock) spends three of agent-beta's units
        // first: the server's log must count them, so its figures come from the shared state, not its own memory.
        const replica = quenchzBudget(
          manualClock().now,
          new RedisBudgetStore(probe.redis as NonNullable<RedisProbe['redis']>, { prefix: probe.prefix }),
        )
        for (let i = 0; i < 3; i++) assert.equal((await replica.request('agent-beta')).admitted, true)
      }
      const spentElsewhere = store === 'redis' ? 3 : 0
      const path = join(scratch, `left-${store}.json`)
      const server = await serve(path, ['--budget-clock', 'frozen', ...extra])
      const tokens = tokensOf(path)
      const quiet = await connect('v2-modern', server.url, tokens.quietForThisResource as string)
      const greedy = await connect('v1', server.url, tokens.greedyForThisResource as string)
      // agent-beta's whole reserve of 15 and then two units of the spare; then agent-alpha once; then an unknown
      // name, charged like any call.
      const quietCalls = 17 - spentElsewhere
      for (let i = 0; i < quietCalls; i++) await quiet.callTool('calendar.why', { day: '2026-04-03' })
      await greedy.callTool('calendar.why', { day: '2026-04-04' })
      await greedy.callTool('series.nothing', {})
      await quiet.close()
      await greedy.close()
      await logged(server, '"call refused"')
      const lines = callLines(server)
      assert.equal(lines.length, quietCalls + 2, server.err())
      const expected: unknown[] = []
      for (let reserve = 14 - spentElsewhere; reserve >= 0; reserve--) expected.push({ reserve, spare: 30 })
      expected.push({ reserve: 0, spare: 29 }, { reserve: 0, spare: 28 })
      assert.deepEqual(
        lines.slice(0, quietCalls).map((l) => [l.level, l.sub, l.outcome, l.left]),
        expected.map((left) => [30, 'agent-beta', 'served', left]),
      )
      assert.deepEqual(
        lines.slice(quietCalls).map((l) => [l.level, l.sub, l.outcome, l.left]),
        [
          [30, 'agent-alpha', 'served', { reserve: 14, spare: 28 }],
          [40, 'agent-alpha', 'no-such-tool', { reserve: 13, spare: 28 }],
        ],
      )
      for (const secret of ['series.nothing', '2026-04-03', '2026-04-04', ...Object.values(tokens)]) {
        assert.ok(!server.err().includes(secret), 'nothing the caller sent appears in the log')
      }
      server.child.kill('SIGTERM')
      await server.exited
    })
  }
})
