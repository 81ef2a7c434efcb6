// quenchz as an operator runs it, through its real CLI process: the admin port scraped by a real Prometheus, /readyz
// following a Redis the test starts, stops and starts again (quenchz listening even while Redis is down at start),
// and SIGTERM under load — every request the server received is answered, the process exits 0.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect as connectTcp } from 'node:net'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import {
  freeLoopbackPort,
  parseExposition,
  probePrometheus,
  probePromtool,
  promtoolCheckMetrics,
  sampleSum,
  startPrometheus,
} from '@tollgate/test-support'
import { main } from '../../src/cli.ts'
import { type CliProcess, runCliToExit, startCliProcess, tokensOf } from './support/cli-process.ts'
import { connect } from './support/clients.ts'
import { modernToolCall } from './support/raw-mcp.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'
import { until } from './support/wait.ts'

const { scratch, empty } = scratchWithEmptyRecordings('quenchz-ops-')
const children: ChildProcess[] = []
after(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  rmSync(scratch, { recursive: true, force: true })
})

/** Serving the empty recordings, the tokens written to `tokensPath`. */
const servingArgs = (tokensPath: string) => [
  '--tokens-file',
  tokensPath,
  '--source',
  'recordings',
  '--recordings',
  empty,
]

/** `quenchz --port 0 ARGS`, listening (and its admin listener too, with --admin-port). */
async function startCli(args: string[]): Promise<CliProcess> {
  const cli = await startCliProcess(['--port', '0', ...args], scratch)
  children.push(cli.child)
  return cli
}

async function status(url: string): Promise<number> {
  const r = await fetch(url)
  await r.arrayBuffer()
  return r.status
}

async function scrape(admin: string) {
  const r = await fetch(`${admin}/metrics`)
  assert.equal(r.status, 200)
  const text = await r.text()
  return { text, samples: parseExposition(text) }
}

/** The CLI up to (not including) listening: flag problems only. */
async function usage(argv: string[]): Promise<{ code: number | 'serving'; err: string }> {
  const lines: string[] = []
  const code = await main(argv, { stderr: (l) => lines.push(l), serve: false, cwd: scratch })
  return { code, err: lines.join('\n') }
}

/** A 2026-07-28 tools/call of calendar.why, as the SDK v2 client sends it, with its Content-Length (raw sockets). */
function whyRequest(token: string, id: number): { headers: Record<string, string>; body: string } {
  const { headers, body } = modernToolCall(token, id, 'calendar.why', { day: '2026-04-03' })
  return { body, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }
}

describe('the admin port', () => {
  test('--admin-port serves /metrics, /livez and /readyz; promtool accepts it; a real Prometheus scrapes it', async (t) => {
    const tokensPath = join(scratch, 'admin.json')
    const server = await startCli([...servingArgs(tokensPath), '--admin-port', '0'])
    try {
      const admin = server.admin as string
      assert.match(admin, /^http:\/\/127\.0\.0\.1:\d+$/)
      assert.equal(await status(`${admin}/livez`), 200)
      assert.equal(await status(`${admin}/readyz`), 200)
      // Nothing operational on the public port.
      assert.equal(await status(`http://127.0.0.1:${server.port}/metrics`), 404)
      const client = await connect('v2-modern', server.url, tokensOf(tokensPath).quietForThisResource as string)
      for (let i = 0; i < 3; i++)
        assert.equal((await client.callTool('calendar.why', { day: '2026-04-03' })).isError, undefined)
      await client.close()
      const { text, samples } = await scrape(admin)
      assert.equal(sampleSum(samples, 'quenchz_tool_calls_total', { tool: 'calendar.why', outcome: 'served' }), 3)
      assert.equal(sampleSum(samples, 'quenchz_budget_charged_total', { caller: 'agent-beta', from: 'reserve' }), 3)
      assert.equal(sampleSum(samples, 'quenchz_ready'), 1)
      // The process's own metrics, under the server's prefix.
      assert.ok(sampleSum(samples, 'quenchz_process_cpu_seconds_total') > 0)
      const promtool = probePromtool()
      if (promtool.skip === undefined) {
        const checked = promtoolCheckMetrics(text)
        assert.ok(checked.ok, checked.output)
      }
      const prometheus = probePrometheus()
      if (prometheus.skip !== undefined) return t.skip(prometheus.skip)
      const prom = await startPrometheus([{ job: 'quenchz', address: new URL(admin).host }])
      try {
        const served = await prom.waitFor('Prometheus to scrape the served calls', async () => {
          const r = await prom.query('sum(quenchz_tool_calls_total{job="quenchz",outcome="served"})')
          return r[0]?.value === 3 ? r[0].value : undefined
        })
        assert.equal(served, 3)
        const targets = await prom.targets()
        assert.deepEqual(
          targets.map((x) => [x.job, x.health, x.lastError]),
          [['quenchz', 'up', '']],
        )
      } finally {
        await prom.stop()
      }
    } finally {
      server.child.kill('SIGTERM')
      assert.equal(await server.exited, 0)
    }
  })

  test('without --admin-port there is no admin listener; flag problems name the flag', async () => {
    const server = await startCli(servingArgs(join(scratch, 'no-admin.json')))
    assert.doesNotMatch(server.err(), /admin listening/)
    server.child.kill('SIGTERM')
    assert.equal(await server.exited, 0)
    const base = servingArgs('t.json')
    const cases: Array<[string[], string]> = [
      [['--admin-host', '0.0.0.0'], '--admin-host needs --admin-port'],
      [['--admin-port', '65536'], '--admin-port must be a whole number from 0 to 65535'],
      [['--admin-port', '9100', '--admin-host', 'a b'], '--admin-host must be an address to bind, such as 127.0.0.1'],
      // `--flag -1` reads -1 as a flag of its own; a negative value can only be typed with `=`.
      [['--shutdown-timeout-ms=-1'], '--shutdown-timeout-ms must be a whole number from 0 to 600000'],
      [['--shutdown-timeout-ms', '600001'], '--shutdown-timeout-ms must be a whole number from 0 to 600000'],
      [['--shutdown-delay-ms', '600001'], '--shutdown-delay-ms must be a whole number from 0 to 600000'],
    ]
    for (const [argv, problem] of cases) {
      const r = await usage([...base, ...argv])
      assert.deepEqual([r.code, r.err], [2, `quenchz: ${problem}\nsee quenchz --help`], argv.join(' '))
    }
  })

  test('an admin port in use: exit 1 naming --admin-port, and no tokens left behind', async () => {
    const busy = createServer()
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r))
    const port = (busy.address() as AddressInfo).port
    const tokensPath = join(scratch, 'busy.json')
    try {
      const { code, err } = await runCliToExit(
        ['--port', '0', ...servingArgs(tokensPath), '--admin-port', String(port)],
        scratch,
      )
      assert.equal(code, 1, err)
      assert.match(
        err,
        new RegExp(`quenchz: port ${port} on 127\\.0\\.0\\.1 is already in use; pass another with --admin-port N`),
      )
      assert.equal(existsSync(tokensPath), false)
      assert.equal(existsSync(`${tokensPath}.key.json`), false)
    } finally {
      busy.close()
    }
  })
})

describe('readiness follows the budget Redis', () => {
  test('Redis down at start: quenchz listens, /readyz 503; ready once Redis answers, out and back in as it stops and returns', async (t) => {
    if (!existsSync('/usr/bin/redis-server') && process.env.TOLLGATE_REQUIRE_SERVICES !== '1')
      return t.skip('no redis-server to start')
    const port = await freeLoopbackPort()
    const dir = mkdtempSync(join(scratch, 'redis-'))
    const password = 'hunter2-redis-pw'
    const startRedis = () => {
      const redis = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--requirepass',
          password,
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
        ],
        { stdio: 'ignore' },
      )
      children.push(redis)
      return redis
    }
    const stopRedis = async (redis: ChildProcess) => {
      const gone = new Promise((r) => redis.once('exit', r))
      redis.kill('SIGTERM')
      await gone
    }
    const tokensPath = join(scratch, 'redis.json')
    const server = await startCli([
      ...servingArgs(tokensPath),
      '--budget-redis',
      `redis://:${password}@127.0.0.1:${port}`,
      '--budget-prefix',
      `quenchz-ops-test-${process.pid}:`,
      '--admin-port',
      '0',
    ])
    const main = `http://127.0.0.1:${server.port}`
    let redis: ChildProcess | undefined
    try {
      assert.equal(await status(`${main}/livez`), 200)
      assert.equal(await status(`${main}/readyz`), 503)
      assert.equal(await status(`${server.admin}/readyz`), 503)
      assert.equal(sampleSum((await scrape(server.admin as string)).samples, 'quenchz_ready'), 0)

      redis = startRedis()
      await until('/readyz 200 once Redis answers', async () => (await status(`${main}/readyz`)) === 200)
      const client = await connect('v2-modern', server.url, tokensOf(tokensPath).quietForThisResource as string)
      assert.equal((await client.callTool('calendar.why', { day: '2026-04-03' })).isError, undefined)
      await client.close()

      await stopRedis(redis)
      await until('/readyz 503 once Redis is gone', async () => (await status(`${main}/readyz`)) === 503)
      redis = startRedis()
      await until('/readyz 200 once Redis is back', async () => (await status(`${main}/readyz`)) === 200)

      // One line per outage and one per return, not one per retry; the password in none of them.
      const lines = server.err().split('\n')
      assert.equal(lines.filter((l) => l.includes('cannot be reached')).length, 2, server.err())
      assert.equal(lines.filter((l) => l.includes('answers again')).length, 2, server.err())
      assert.ok(!server.err().includes(password))
    } finally {
      server.child.kill('SIGTERM')
      assert.equal(await server.exited, 0)
      if (redis !== undefined) await stopRedis(redis)
    }
  })
})

describe('SIGTERM: a graceful stop', () => {
  test('a request whose body is still arriving is answered (Connection: close); /readyz 503 at once; exit 0', async () => {
    const tokensPath = join(scratch, 'slow.json')
    const server = await startCli([
      ...servingArgs(tokensPath),
      '--admin-port',
      '0',
      // The drain itself is what this test is about: no serving-as-usual delay first.
      '--shutdown-delay-ms',
      '0',
    ])
    const admin = server.admin as string
    const { headers, body } = whyRequest(tokensOf(tokensPath).quietForThisResource as string, 7)
    const socket = connectTcp(server.port, '127.0.0.1')
    await new Promise<void>((r) => socket.once('connect', () => r()))
    let answer = ''
    socket.setEncoding('utf8')
    socket.on('data', (c: string) => {
      answer += c
    })
    const closed = new Promise<void>((r) => socket.once('close', () => r()))
    const head = Object.entries({ ...headers, host: `127.0.0.1:${server.port}` })
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')
    socket.write(`POST /mcp HTTP/1.1\r\n${head}\r\n\r\n${body.slice(0, 20)}`)
    await until('the server to hold the request', async () => {
      return sampleSum((await scrape(admin)).samples, 'quenchz_http_requests_in_flight') === 1
    })
    server.child.kill('SIGTERM')
    // Not ready at once (the admin port stays up while the main port drains), and no new connection is accepted.
    await until('/readyz 503 while draining', async () => (await status(`${admin}/readyz`)) === 503)
    await assert.rejects(fetch(`http://127.0.0.1:${server.port}/livez`))
    assert.equal(answer, '', 'nothing answered before the body is complete')
    socket.write(body.slice(20))
    await closed
    assert.match(answer, /^HTTP\/1\.1 200 /)
    assert.match(answer, /\r\nconnection: close\r\n/i)
    assert.match(answer, /"id":7/)
    assert.doesNotMatch(answer, /"isError":true/)
    assert.equal(await server.exited, 0)
    assert.match(server.err(), /"msg":"shutting down"/)
    assert.doesNotMatch(server.err(), /requests cut/)
    assert.equal(existsSync(`${tokensPath}.key.json`), false)
  })

  test('under load on keep-alive connections: every request the server received is answered; exit 0', async () => {
    const tokensPath = join(scratch, 'load.json')
    // One call in service at a time: the others are received and wait, unanswered, while the reserve lasts.
    const server = await startCli([
      ...servingArgs(tokensPath),
      '--admin-port',
      '0',
      '--max-in-flight',
      '1',
      '--log-level',
      'info',
      '--shutdown-delay-ms',
      '0',
    ])
    const admin = server.admin as string
    const token = tokensOf(tokensPath).quietForThisResource as string
    const agent = new Agent({ keepAlive: true, maxSockets: 16 })
    let stopped = false
    let signalled = false
    const tally = { answered: 0, answeredAfterSignal: 0, notReceived: 0, closeHeaders: 0, wrong: [] as string[] }
    let id = 0
    const one = () =>
      new Promise<void>((resolve) => {
        const { headers, body } = whyRequest(token, ++id)
        const req = request(
          { agent, host: '127.0.0.1', port: server.port, path: '/mcp', method: 'POST', headers },
          (res) => {
            let text = ''
            res.setEncoding('utf8')
            res.on('data', (c: string) => {
              text += c
            })
            res.on('end', () => {
              // Every answer is a JSON-RPC result (served, or over budget once the reserve is spent): never cut.
              if (res.statusCode === 200 && text.includes('"result"')) {
                tally.answered++
                if (signalled) tally.answeredAfterSignal++
                if (res.headers.connection === 'close') tally.closeHeaders++
              } else tally.wrong.push(`${res.statusCode} ${text.slice(0, 120)}`)
              resolve()
            })
            res.on('error', (e) => {
              tally.wrong.push(`answer cut: ${e.message}`)
              resolve()
            })
          },
        )
        req.on('error', (e: NodeJS.ErrnoException) => {
          // A request the server never read (an idle connection closed, or no longer accepting): not received.
          if (['ECONNRESET', 'ECONNREFUSED', 'EPIPE'].includes(e.code ?? '') || e.message === 'socket hang up')
            tally.notReceived++
          else tally.wrong.push(`request failed: ${e.message}`)
          resolve()
        })
        req.end(body)
      })
    const loops = Array.from({ length: 16 }, async () => {
      while (!stopped) {
        await one()
        if (signalled && tally.notReceived > 0) break
      }
    })
    // Sixteen keep-alive connections, each with a call in flight whenever the signal comes.
    await until('the load to run', async () => {
      const { samples } = await scrape(admin)
      return sampleSum(samples, 'quenchz_tool_calls_total') >= 50
    })
    signalled = true
    server.child.kill('SIGTERM')
    const code = await server.exited
    stopped = true
    await Promise.all(loops)
    agent.destroy()
    assert.equal(code, 0, server.err().slice(-2000))
    assert.deepEqual(tally.wrong, [])
    // Every call the server logged (it logs a call when its answer is ready) reached the client whole.
    const logged = server
      .err()
      .split('\n')
      .filter((l) => /"msg":"call( refused)?"/.test(l)).length
    assert.equal(tally.answered, logged, JSON.stringify(tally))
    assert.ok(tally.answeredAfterSignal > 0, 'calls waiting at the signal were answered after it')
    assert.doesNotMatch(server.err(), /requests cut/)
    console.log(`# graceful stop under load: ${JSON.stringify({ ...tally, wrong: tally.wrong.length })}`)
  })
})
