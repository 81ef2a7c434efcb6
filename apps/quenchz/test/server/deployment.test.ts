// The CLI's deployment options over real HTTP: a real issuer by JWKS URL, a fair budget shared through Redis by
// two server processes, and the errors for bad values. Servers run as subprocesses of the CLI itself.
import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { probeRedis, type RedisProbe } from '@tollgate/test-support'
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { main } from '../../src/cli.ts'
import { NODE_ARGS, runCliToExit, tokensOf } from './support/cli-process.ts'
import { connect } from './support/clients.ts'
import { scratchWithEmptyRecordings } from './support/scratch.ts'

const RESOURCE = 'https://quenchz.invalid/mcp'
const ELSEWHERE = 'https://elsewhere.invalid/mcp'
const REAL_ISSUER = 'https://issuer.example.invalid'
const NO_SUCH_TOOL = 'no tool by that name is available to this caller'
const OVER_BUDGET = 'this caller has spent its share of the upstream budget'

const { scratch, empty } = scratchWithEmptyRecordings('quenchz-deploy-')

/** A CLI verifying tokens against the JWKS at `url`, serving the empty recordings directory. */
const jwksArgs = (url: string) => [
  '--jwks-url',
  url,
  '--issuer',
  REAL_ISSUER,
  '--source',
  'recordings',
  '--recordings',
  empty,
]
const children: ChildProcess[] = []
after(async () => {
  for (const child of children) await stopCli(child)
  rmSync(scratch, { recursive: true, force: true })
})

/** Starts the CLI as a subprocess and resolves with its URL once it says it listens. */
async function startCli(
  args: string[],
): Promise<{ child: ChildProcess; url: string; line: string; err: () => string }> {
  // The frozen clock: these tests count admissions exactly, so the budget must not refill meanwhile.
  const child = spawn(process.execPath, [...NODE_ARGS, '--port', '0', '--budget-clock', 'frozen', ...args], {
    cwd: scratch,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  children.push(child)
  let err = ''
  return await new Promise((resolve, reject) => {
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      err += chunk
      // Whole lines only: a chunk may end mid-line (`.*$` would take a half-written line).
      const m = /^quenchz listening on (\S+) .*$/m.exec(err.slice(0, err.lastIndexOf('\n') + 1))
      if (m) resolve({ child, url: m[1] as string, line: m[0], err: () => err })
    })
    child.once('exit', (code) => reject(new Error(`the CLI exited ${code} before listening: ${err}`)))
  })
}

async function stopCli(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  child.kill('SIGTERM')
  await exited
}

async function run(argv: string[]) {
  const lines: string[] = []
  const code = await main(argv, { stderr: (l) => lines.push(l), serve: false, cwd: scratch })
  return { code, err: lines.join('\n') }
}

/** A loopback JWKS endpoint serving one RS256 public key; `body` can be swapped to serve something broken. */
async function startJwks() {
  const { publicKey, privateKey } = await generateKeyPair('RS256')
  const kid = randomUUID()
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }
  const state = { status: 200, body: JSON.stringify({ keys: [jwk] }) }
  const server: Server = createServer((req, res) => {
    res.writeHead(req.url === '/jwks.json' ? state.status : 404, { 'content-type': 'application/json' })
    res.end(req.url === '/jwks.json' ? state.body : '{}')
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`
  const sign = async (claims: {
    sub: string
    scope: string
    aud?: string | string[]
    iss?: string
    expiresIn?: number
    key?: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']
  }) => {
    const now = Math.floor(Date.now() / 1000)
    const jwt = new SignJWT({ scope: claims.scope })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
      .setSubject(claims.sub)
      .setIssuer(claims.iss ?? REAL_ISSUER)
      .setIssuedAt(now)
      .setExpirationTime(now + (claims.expiresIn ?? 900))
    if (claims.aud !== undefined) jwt.setAudience(claims.aud)
    return await jwt.sign(claims.key ?? privateKey)
  }
  return {
    url,
    state,
    sign,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

/** 'refused' for the gate's 401, else the tool names the token's bearer is shown (through the official v2 client). */
async function outcome(url: string, token: string): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
  await res.body?.cancel()
  if (res.status === 401) {
    assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/)
    return 'refused'
  }
  const client = await connect('v2-modern', url, token)
  try {
    return (await client.listTools()).tools.map((t) => t.name).join(',') || '(no tools)'
  } finally {
    await client.close()
  }
}

describe('--jwks-url and --issuer: tokens of a real issuer', () => {
  let jwks: Awaited<ReturnType<typeof startJwks>>
  before(async () => {
    jwks = await startJwks()
  })
  after(async () => {
    await jwks?.close()
  })

  test('the six manifest kinds are admitted and refused exactly as the in-process issuer’s are', async () => {
    // The in-process issuer's own tokens, from the manifest of a default-mode CLI.
    const manifestPath = join(scratch, 'default-tokens.json')
    const inProcess = await startCli(['--tokens-file', manifestPath, '--source', 'recordings', '--recordings', empty])
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { tokens: Record<string, string> }
    const real = await startCli(jwksArgs(jwks.url))
    assert.equal(
      real.line,
      `quenchz listening on ${real.url} as ${RESOURCE} (source: recordings, budget clock: frozen, tokens: ${jwks.url})`,
    )
    const signed: Record<string, string> = {
      greedyForThisResource: await jwks.sign({ sub: 'agent-alpha', scope: 'rates:read', aud: RESOURCE }),
      quietForThisResource: await jwks.sign({ sub: 'agent-beta', scope: 'rates:read', aud: RESOURCE }),
      forAnotherResource: await jwks.sign({ sub: 'agent-alpha', scope: 'rates:read', aud: ELSEWHERE }),
      forTwoResources: await jwks.sign({ sub: 'agent-alpha', scope: 'rates:read', aud: [RESOURCE, ELSEWHERE] }),
      withNoAudience: await jwks.sign({ sub: 'agent-alpha', scope: 'rates:read' }),
      withoutTheRatesScope: await jwks.sign({ sub: 'agent-alpha', scope: 'something:else', aud: RESOURCE }),
    }
    const expected: Record<string, string> = {
      greedyForThisResource: 'calendar.why,rates.convert,rates.window',
      quietForThisResource: 'calendar.why,rates.convert,rates.window',
      forAnotherResource: 'refused',
      forTwoResources: 'refused',
      withNoAudience: 'refused',
      withoutTheRatesScope: '(no tools)',
    }
    assert.deepEqual(Object.keys(manifest.tokens), Object.keys(expected))
    for (const kind of Object.keys(expected)) {
      assert.equal(await outcome(inProcess.url, manifest.tokens[kind] as string), expected[kind], `in-process ${kind}`)
      assert.equal(await outcome(real.url, signed[kind] as string), expected[kind], `jwks ${kind}`)
    }
    // Each door trusts only its own issuer.
    assert.equal(await outcome(real.url, manifest.tokens.greedyForThisResource as string), 'refused')
    assert.equal(await outcome(inProcess.url, signed.greedyForThisResource as string), 'refused')
    await stopCli(inProcess.child)
    await stopCli(real.child)
  })

  test('a token from another iss, signed by a key not in the JWKS, or expired is refused', async () => {
    const real = await startCli(jwksArgs(jwks.url))
    const other = await generateKeyPair('RS256')
    const base = { sub: 'agent-alpha', scope: 'rates:read', aud: RESOURCE }
    assert.equal(await outcome(real.url, await jwks.sign(base)), 'calendar.why,rates.convert,rates.window')
    assert.equal(
      await outcome(real.url, await jwks.sign({ ...base, iss: 'https://issuer.quenchz.invalid' })),
      'refused',
    )
    assert.equal(await outcome(real.url, await jwks.sign({ ...base, key: other.privateKey })), 'refused')
    assert.equal(await outcome(real.url, await jwks.sign({ ...base, expiresIn: -60 })), 'refused')
    await stopCli(real.child)
  })

  test('with a valid pair and no --tokens-file, nothing is minted or written and the CLI is ready (serving stubbed)', async () => {
    assert.deepEqual(
      await run(['--jwks-url', jwks.url, '--issuer', REAL_ISSUER, '--source', 'recordings', '--recordings', empty]),
      {
        code: 0,
        err: '',
      },
    )
  })

  test('a JWKS that answers 404, is not JSON or holds no keys exits 1 with one line', async () => {
    const args = jwksArgs
    const missing = jwks.url.replace('/jwks.json', '/nothing.json')
    assert.deepEqual(await run(args(missing)), { code: 1, err: `could not fetch the JWKS at ${missing}: HTTP 404` })
    const saved = jwks.state.body
    try {
      jwks.state.body = 'not json'
      assert.deepEqual(await run(args(jwks.url)), { code: 1, err: `the JWKS at ${jwks.url} is not JSON` })
      jwks.state.body = '{"keys":[]}'
      assert.deepEqual(await run(args(jwks.url)), { code: 1, err: `the JWKS at ${jwks.url} holds no keys` })
    } finally {
      jwks.state.body = saved
    }
  })

  test('an unreachable JWKS exits 1 naming the address without its query', async () => {
    // A port that was just free and is closed again: nothing listens there.
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((r) => closed.close(() => r()))
    const { code, err } = await run(jwksArgs(`http://127.0.0.1:${port}/jwks.json?token=hunter2`))
    assert.equal(code, 1)
    assert.equal(err, `could not fetch the JWKS at http://127.0.0.1:${port}/jwks.json: ECONNREFUSED`)
  })
})

describe('bad deployment values exit 2 with one line naming the flag and where help is, echoing no secret', () => {
  const cases: Array<[string[], string]> = [
    [['--jwks-url', 'https://id.example.invalid/jwks.json'], '--jwks-url needs --issuer'],
    [['--issuer', REAL_ISSUER], '--issuer needs --jwks-url'],
    [
      ['--jwks-url', 'ftp://id.example.invalid/jwks', '--issuer', REAL_ISSUER],
      '--jwks-url must be an http or https URL',
    ],
    [['--jwks-url', 'not a url', '--issuer', REAL_ISSUER], '--jwks-url must be an http or https URL'],
    [
      ['--jwks-url', 'https://me:hunter2@id.example.invalid/jwks.json', '--issuer', REAL_ISSUER],
      '--jwks-url must not carry a user or password',
    ],
    [
      ['--jwks-url', 'https://id.example.invalid/jwks.json', '--issuer', ' '],
      '--issuer must be a non-empty string without surrounding spaces',
    ],
    [
      ['--jwks-url', 'https://id.example.invalid/jwks.json', '--issuer', REAL_ISSUER, '--tokens-file', 't.json'],
      '--tokens-file and --jwks-url exclude each other: give one',
    ],
    [['--tokens-file', 't.json', '--budget-redis', 'hunter2'], '--budget-redis must be a redis:// or rediss:// URL'],
    [
      ['--tokens-file', 't.json', '--budget-redis', 'http://:hunter2@127.0.0.1:6379'],
      '--budget-redis must be a redis:// or rediss:// URL',
    ],
    [['--tokens-file', 't.json', '--budget-prefix', 'x:'], '--budget-prefix needs --budget-redis'],
    [
      ['--tokens-file', 't.json', '--budget-redis', 'redis://127.0.0.1:6379', '--budget-prefix', ''],
      '--budget-prefix must be 1 to 200 printable characters without spaces',
    ],
    [
      ['--tokens-file', 't.json', '--budget-redis', 'redis://127.0.0.1:6379', '--budget-prefix', 'a b'],
      '--budget-prefix must be 1 to 200 printable characters without spaces',
    ],
    [
      ['--tokens-file', 't.json', '--budget-redis', 'redis://127.0.0.1:6379', '--budget-clock', 'monotonic'],
      '--budget-clock monotonic is per process: with --budget-redis use frozen or wall',
    ],
  ]
  for (const [argv, first] of cases) {
    test(`${argv.join(' ')} → ${first}`, async () => {
      const { code, err } = await run(argv)
      assert.equal(code, 2)
      assert.deepEqual(err.split('\n'), [`quenchz: ${first}`, 'see quenchz --help'])
      assert.doesNotMatch(err, /hunter2/)
    })
  }

  test('an MCP_SESSION_KEY under 32 characters exits 2 naming the variable, never its value', async () => {
    const lines: string[] = []
    const env = { ...process.env, MCP_SESSION_KEY: 'hunter2-short-key' }
    const code = await main(['--tokens-file', 't.json'], {
      stderr: (l) => lines.push(l),
      serve: false,
      cwd: scratch,
      env,
    })
    assert.equal(code, 2)
    assert.equal(
      lines.join('\n').split('\n')[0],
      'quenchz: MCP_SESSION_KEY must be at least 32 characters (the MAC key of 2025-era session ids)',
    )
    assert.doesNotMatch(lines.join('\n'), /hunter2/)
  })

  test('a subprocess given half the JWKS pair exits 2 with the message and where help is, no stack trace', async () => {
    const { code, err } = await runCliToExit(['--jwks-url', 'https://id.example.invalid/jwks.json'], scratch)
    assert.equal(code, 2)
    assert.deepEqual(err.trimEnd().split('\n'), ['quenchz: --jwks-url needs --issuer', 'see quenchz --help'])
    assert.doesNotMatch(err, /^\s+at /m)
  })

  test('an unreachable Redis is not fatal: one line naming host and port, not the password; /readyz 503', async () => {
    const { child, url, err } = await startCli([
      '--tokens-file',
      join(scratch, 'no-redis.json'),
      '--source',
      'recordings',
      '--recordings',
      empty,
      '--budget-redis',
      'redis://:hunter2@127.0.0.1:1',
    ])
    const origin = new URL(url).origin
    try {
      assert.equal((await fetch(`${origin}/livez`)).status, 200)
      assert.equal((await fetch(`${origin}/readyz`)).status, 503)
    } finally {
      await stopCli(child)
    }
    assert.equal(child.exitCode, 0)
    // Said once, before listening, however often the client retries meanwhile.
    const lines = err()
      .split('\n')
      .filter((l) => l.includes('budget Redis'))
    assert.deepEqual(lines, [
      'the budget Redis at 127.0.0.1:1 cannot be reached (connect ECONNREFUSED 127.0.0.1:1); calls are refused until it answers',
    ])
    assert.doesNotMatch(err(), /hunter2/)
  })
})

describe('--budget-redis: two servers share one fair budget', () => {
  let probe: RedisProbe
  let jwks: Awaited<ReturnType<typeof startJwks>>
  before(async () => {
    probe = await probeRedis('quenchz-test')
    jwks = await startJwks()
  })
  after(async () => {
    await probe?.cleanup()
    await jwks?.close()
  })

  test('with --jwks-url every sub is a caller: a reserve and the pool spent across server A and B are spent on both; another caller’s reserve is not', async (t) => {
    if (probe.skip) return t.skip(probe.skip)
    const args = [
      ...jwksArgs(jwks.url),
      ...['--budget-redis', 'redis://127.0.0.1:6379', '--budget-prefix', probe.prefix],
      ...['--caller-reserve', '15', '--budget-pool', '30'],
    ]
    const a = await startCli(args)
    const b = await startCli(args)
    assert.equal(
      a.line,
      `quenchz listening on ${a.url} as ${RESOURCE} (source: recordings, budget clock: frozen, tokens: ${jwks.url}, budget: redis 127.0.0.1:6379 ${probe.prefix})`,
    )
    // Two subs no configuration names: the issuer vouches for them, so each is a caller with a reserve of its own.
    const alpha = await jwks.sign({ sub: 'erin@example.org', scope: 'rates:read', aud: RESOURCE })
    const beta = await jwks.sign({ sub: 'frank@example.org', scope: 'rates:read', aud: RESOURCE })
    const clients = {
      alphaA: await connect('v2-modern', a.url, alpha),
      alphaB: await connect('v2-modern', b.url, alpha),
      betaB: await connect('v2-modern', b.url, beta),
    }
    const call = async (c: (typeof clients)['alphaA']) => {
      const r = await c.callTool('rates.nothing', {})
      return r.content[0]?.text
    }
    try {
      // Reserve 15 and pool 30, frozen clock: erin's 15 plus the pool's 30 = 45 calls in all, however they are
      // spread over the replicas. Unknown names are charged like served calls.
      for (let i = 0; i < 45; i++)
        assert.equal(await call(i % 2 === 0 ? clients.alphaA : clients.alphaB), NO_SUCH_TOOL, `call ${i + 1}`)
      assert.equal(await call(clients.alphaA), OVER_BUDGET)
      assert.equal(await call(clients.alphaB), OVER_BUDGET)
      // frank's own reserve (15) survives on B, and is then spent there for A too.
      for (let i = 0; i < 15; i++) assert.equal(await call(clients.betaB), NO_SUCH_TOOL, `frank call ${i + 1}`)
      const betaA = await connect('v2-modern', a.url, beta)
      try {
        assert.equal(await call(betaA), OVER_BUDGET)
      } finally {
        await betaA.close()
      }
      // The state lives under this run's prefix: the epoch, one key per caller not yet refilled, and the pool.
      const open = `${probe.prefix}open:open:`
      assert.deepEqual(
        ((await probe.redis?.keys(`${probe.prefix}*`)) ?? []).filter((k) => !k.includes(':sessions:')).sort(),
        [`${probe.prefix}epoch`, `${open}c:erin@example.org`, `${open}c:frank@example.org`, `${open}pool`],
      )
    } finally {
      for (const c of Object.values(clients)) await c.close()
      await stopCli(a.child)
      await stopCli(b.child)
    }
  })

  test('with --tokens-file the seed’s budget is unchanged on Redis: agent-alpha 15 + 30, agent-beta 15', async (t) => {
    if (probe.skip) return t.skip(probe.skip)
    const prefix = `${probe.prefix}seed:`
    const tokensPath = join(scratch, 'seed-redis.json')
    const a = await startCli([
      ...['--tokens-file', tokensPath, '--source', 'recordings', '--recordings', empty],
      ...['--budget-redis', 'redis://127.0.0.1:6379', '--budget-prefix', prefix],
    ])
    const tokens = tokensOf(tokensPath)
    const greedy = await connect('v2-modern', a.url, tokens.greedyForThisResource as string)
    const quiet = await connect('v2-modern', a.url, tokens.quietForThisResource as string)
    const call = async (c: typeof greedy) => (await c.callTool('rates.nothing', {})).content[0]?.text
    try {
      for (let i = 0; i < 45; i++) assert.equal(await call(greedy), NO_SUCH_TOOL, `agent-alpha call ${i + 1}`)
      assert.equal(await call(greedy), OVER_BUDGET)
      for (let i = 0; i < 15; i++) assert.equal(await call(quiet), NO_SUCH_TOOL, `agent-beta call ${i + 1}`)
      assert.equal(await call(quiet), OVER_BUDGET)
      assert.ok((await probe.redis?.keys(`${prefix}*`))?.includes(`${prefix}fair:fair`))
    } finally {
      await greedy.close()
      await quiet.close()
      await stopCli(a.child)
    }
  })
})
