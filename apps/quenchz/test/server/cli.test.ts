// The interop CLI: the tokens-path guard, the manifest it writes before listening, and its argument errors.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, describe, test } from 'node:test'
import { allowListOf, main } from '../../src/cli.ts'
import { SERVE_FLAGS, TOKENS_FLAGS } from '../../src/server/cli-options.ts'
import { CASSETTES, HISTORY_ZIP, NO_CASSETTES, REPO_ROOT } from './support/shared.ts'

/** The line the CLI prints once the tokens file is written. */
const written = (path: string, seconds = 900) => `tokens written to ${path} (valid ${seconds} s; renew: quenchz tokens)`

const scratch = mkdtempSync(join(tmpdir(), 'quenchz-cli-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

// The live source's default cache goes under $XDG_CACHE_HOME: kept inside the scratch folder here.
const quietEnv = { ...process.env, XDG_CACHE_HOME: join(scratch, 'cache') }

async function run(argv: string[], cwd = scratch, env: NodeJS.ProcessEnv = quietEnv) {
  const lines: string[] = []
  const out: string[] = []
  const code = await main(argv, { stderr: (l) => lines.push(l), stdout: (l) => out.push(l), serve: false, cwd, env })
  return { code, err: lines.join('\n'), out: out.join('\n') }
}

describe('the tokens path guard', () => {
  for (const path of [
    'tokens.json',
    'data/tokens.json',
    'docs/evidence/tokens.json',
    'tests/tokens.json',
    'apps/quenchz/tokens.json',
  ]) {
    test(`refuses ${path} typed inside the checkout, exit 1, writing nothing`, async () => {
      const { code, err } = await run(
        ['--tokens-file', path, '--source', 'recordings', '--recordings', scratch],
        REPO_ROOT,
      )
      assert.equal(code, 1)
      assert.equal(err, `refusing to write tokens inside the repository: ${join(REPO_ROOT, path)}`)
      assert.equal(existsSync(join(REPO_ROOT, path)), false)
    })
  }

  test('refuses an absolute path into the checkout from outside it', async () => {
    const { code } = await run([
      '--tokens-file',
      join(REPO_ROOT, 'apps', 'tokens.json'),
      '--source',
      'recordings',
      '--recordings',
      scratch,
    ])
    assert.equal(code, 1)
  })
})

describe('the token manifest', { skip: NO_CASSETTES }, () => {
  test('is written outside the repository, before serving, with six three-part tokens and no admission counts', async () => {
    const path = join(scratch, 'manifest.json')
    const { code, err } = await run([
      '--port',
      '8931',
      '--tokens-file',
      path,
      '--source',
      'recordings',
      '--recordings',
      CASSETTES,
    ])
    assert.equal(code, 0)
    assert.equal(err, written(path))
    const text = readFileSync(path, 'utf8')
    assert.ok(text.endsWith('}\n'))
    assert.equal(statSync(path).mode & 0o777, 0o600)
    const manifest = JSON.parse(text)
    assert.deepEqual(Object.keys(manifest), ['url', 'callers', 'budget', 'tokens', 'source'])
    assert.equal(manifest.url, 'http://127.0.0.1:8931/mcp')
    assert.deepEqual(manifest.callers, { greedy: 'agent-alpha', quiet: 'agent-beta' })
    assert.deepEqual(manifest.budget, { capacity: 60, reserveFraction: 0.5, callerCount: 2, clock: 'wall' })
    assert.equal(manifest.source, 'ECB statistics.')
    assert.deepEqual(Object.keys(manifest.tokens), [
      'greedyForThisResource',
      'quietForThisResource',
      'forAnotherResource',
      'forTwoResources',
      'withNoAudience',
      'withoutTheRatesScope',
    ])
    const claims = (t: string) => JSON.parse(Buffer.from(t.split('.')[1] as string, 'base64url').toString('utf8'))
    for (const token of Object.values(manifest.tokens) as string[]) assert.equal(token.split('.').length, 3)
    assert.equal(claims(manifest.tokens.greedyForThisResource).aud, 'https://quenchz.invalid/mcp')
    assert.equal(claims(manifest.tokens.quietForThisResource).sub, 'agent-beta')
    assert.equal(claims(manifest.tokens.forAnotherResource).aud, 'https://elsewhere.invalid/mcp')
    assert.deepEqual(claims(manifest.tokens.forTwoResources).aud, [
      'https://quenchz.invalid/mcp',
      'https://elsewhere.invalid/mcp',
    ])
    assert.equal('aud' in claims(manifest.tokens.withNoAudience), false)
    assert.equal(claims(manifest.tokens.withoutTheRatesScope).scope, 'something:else')
    // The client must derive 45 and 15; neither may be handed to it.
    const withoutTokens = JSON.stringify({ ...manifest, tokens: {} })
    assert.ok(!withoutTokens.includes('45') && !withoutTokens.includes('15'))
  })

  test('the served default is the wall clock, and it is reported in the manifest', async () => {
    const path = join(scratch, 'wall.json')
    const { code } = await run(['--tokens-file', path, '--source', 'recordings', '--recordings', CASSETTES])
    assert.equal(code, 0)
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).budget.clock, 'wall')
  })

  test('--budget-clock monotonic is reported in the manifest', async () => {
    const path = join(scratch, 'monotonic.json')
    const { code } = await run([
      '--tokens-file',
      path,
      '--budget-clock',
      'monotonic',
      '--source',
      'recordings',
      '--recordings',
      CASSETTES,
    ])
    assert.equal(code, 0)
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).budget.clock, 'monotonic')
  })
})

describe('argument errors exit 2 with one line naming the flag, then where help is', () => {
  const cases: Array<[string[], string]> = [
    [[], '--tokens-file is required (or --jwks-url and --issuer)'],
    [['--tokens-file', 'x.json', '--port', 'eighty'], '--port must be a whole number from 0 to 65535'],
    [['--tokens-file', 'x.json', '--port', '65536'], '--port must be a whole number from 0 to 65535'],
    [['--tokens-file', 'x.json', '--port'], '--port needs a value'],
    [['--tokens-file', 'x.json', '--source', 'ftp'], '--source must be live, history or recordings'],
    [
      ['--tokens-file', 'x.json', '--source', 'history'],
      '--source history needs --history FILE (eurofxref-hist .zip or .csv)',
    ],
    [['--tokens-file', 'x.json', '--history', 'h.zip'], '--history needs --source history'],
    [['--tokens-file', 'x.json', '--budget-clock', 'sundial'], '--budget-clock must be wall, monotonic or frozen'],
    [['--tokens-file', 'x.json', '--token-lifetime', '0'], '--token-lifetime must be a whole number from 1 to 604800'],
    [['--tokens-file', 'x.json', '--max-in-flight', 'lots'], '--max-in-flight must be a whole number from 1 to 1024'],
    [['--tokens-file', 'x.json', '--max-waiting', '0'], '--max-waiting must be a whole number from 1 to 65536'],
    [
      ['--tokens-file', 'x.json', '--public-url', 'https://u:p@rates.example/mcp'],
      '--public-url must carry no user, password, query or fragment',
    ],
    [
      ['--tokens-file', 'x.json', '--public-url', 'rates.example'],
      '--public-url must be an absolute http or https URL, such as https://rates.example/mcp',
    ],
    [
      ['--tokens-file', 'x.json', '--allowed-host', 'a b'],
      '--allowed-host must be a host name or address, optionally with :PORT',
    ],
    [
      ['--tokens-file', 'x.json', '--log-level', 'loud'],
      '--log-level must be one of fatal, error, warn, info, debug, trace, silent',
    ],
    [['--tokens-file', 'x.json', '--bogus'], 'unknown flag --bogus'],
    [['--tokens-file', 'x.json', 'stray'], 'unexpected argument: this command takes flags only'],
  ]
  for (const [argv, first] of cases) {
    test(`${argv.join(' ') || '(no arguments)'} → ${first}`, async () => {
      const { code, err, out } = await run(argv)
      assert.equal(code, 2)
      assert.deepEqual(err.split('\n'), [`quenchz: ${first}`, 'see quenchz --help'])
      assert.equal(out, '')
    })
  }

  test('a huge unknown flag is named by a short prefix only', async () => {
    const { code, err } = await run(['--tokens-file', 'x.json', `--${'x'.repeat(100_000)}`])
    assert.equal(code, 2)
    assert.ok(err.length < 200, err.slice(0, 300))
    assert.match(err, /^quenchz: unknown flag --x{38}…\n/)
  })
})

describe('-h, --help and --version', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'apps/quenchz/package.json'), 'utf8')) as { version: string }
  for (const flag of ['-h', '--help']) {
    test(`${flag} prints every flag with its default on stdout and exits 0`, async () => {
      const { code, err, out } = await run([flag])
      assert.equal(code, 0)
      assert.equal(err, '')
      assert.match(out, /^usage: quenchz --tokens-file PATH/)
      for (const name of Object.keys(SERVE_FLAGS)) assert.match(out, new RegExp(`--${name}\\b`), name)
      assert.match(out, /--port N +port to listen on; 0 picks a free one \(default: 8931; 0–65535\)/)
      assert.match(out, /--budget-clock NAME .*\(default: wall\)/)
      assert.match(out, /--source NAME .*\(default: live\)/)
      assert.match(out, /--token-lifetime SECONDS .*\(default: 900; 1–604800; not with --jwks-url\)/)
      assert.match(out, /--max-waiting N .*\(default: 32; 1–65536\)/)
      assert.match(out, /--max-in-flight N .*\(default: 2; 1–1024\)/)
      assert.match(out, /--admin-host ADDR .*\(default: 127.0.0.1; needs --admin-port\)/)
    })
  }
  test('--version prints the package version', async () => {
    assert.deepEqual(await run(['--version']), { code: 0, err: '', out: `quenchz ${pkg.version}` })
  })
  test('help wins over other problems on the line', async () => {
    assert.equal((await run(['--port', 'eighty', '--help'])).code, 0)
  })
  test('quenchz tokens --help names its flags', async () => {
    const { code, out } = await run(['tokens', '--help'])
    assert.equal(code, 0)
    assert.match(out, /^usage: quenchz tokens --tokens-file PATH/)
    assert.match(out, /--token-lifetime SECONDS/)
  })
})

describe('serving failures and paths', () => {
  // An empty recordings directory: a source that opens everywhere, so these need no shared data.
  const empty = join(scratch, 'empty-recordings')
  mkdirSync(empty, { recursive: true })
  writeFileSync(join(empty, 'index.json'), '[]')

  test('a port already in use exits 1, says so, and leaves no tokens file behind', async () => {
    const blocker = createServer()
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r))
    const port = (blocker.address() as { port: number }).port
    const path = join(scratch, 'busy.json')
    const lines: string[] = []
    try {
      const code = await main(
        ['--port', String(port), '--tokens-file', path, '--source', 'recordings', '--recordings', empty],
        { stderr: (l) => lines.push(l), cwd: scratch },
      )
      assert.equal(code, 1)
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()))
    }
    assert.equal(lines[0], written(path))
    assert.equal(
      lines[1],
      `quenchz: port ${port} on 127.0.0.1 is already in use; pass another with --port N (--port 0 picks a free one)`,
    )
    assert.equal(existsSync(path), false)
    assert.equal(existsSync(`${path}.key.json`), false, 'the signing key is removed too')
  })

  test('a tokens path that cannot be written exits 1 with one plain line, before or after binding', async () => {
    const path = join(scratch, 'no-such-dir', 'tokens.json')
    for (const port of ['8931', '0']) {
      const lines: string[] = []
      const code = await main(
        ['--port', port, '--tokens-file', path, '--source', 'recordings', '--recordings', empty],
        {
          stderr: (l) => lines.push(l),
          cwd: scratch,
        },
      )
      assert.equal(code, 1, port)
      assert.deepEqual(lines, [`could not write the tokens file: ENOENT: no such file or directory, open '${path}'`])
    }
  })

  test('--history and --recordings are read relative to the working directory given', async () => {
    const dir = join(scratch, 'relative')
    mkdirSync(join(dir, 'rec'), { recursive: true })
    writeFileSync(join(dir, 'hist.csv'), 'Date,USD,\n2026-04-10,1.1711,\n')
    writeFileSync(join(dir, 'rec', 'index.json'), '[]')
    const history = await run(['--tokens-file', 'h.json', '--source', 'history', '--history', 'hist.csv'], dir)
    assert.deepEqual(history, { code: 0, err: written(join(dir, 'h.json')), out: '' })
    const recordings = await run(['--tokens-file', 'r.json', '--source', 'recordings', '--recordings', 'rec'], dir)
    assert.equal(recordings.code, 0)
  })
})

describe('the README server commands', () => {
  const readme = readFileSync(join(REPO_ROOT, 'apps/quenchz/README.md'), 'utf8')
  const lines = [...readme.matchAll(/```sh\n([\s\S]*?)\n```/g)]
    .flatMap((m) => (m[1] as string).split('\n'))
    .filter((l) => l.startsWith('npx quenchz '))
  /** The words of a README line as a shell expands them. */
  const words = (line: string, env: NodeJS.ProcessEnv = process.env) => {
    const out = spawnSync('sh', ['-c', `set -- ${line.slice('npx quenchz '.length)}; printf '%s\\0' "$@"`], {
      encoding: 'utf8',
      env,
    })
    assert.equal(out.status, 0, out.stderr)
    return out.stdout.split('\0').slice(0, -1)
  }

  test("the issue's command is printed exactly once", () => {
    assert.equal(lines.filter((l) => /^npx quenchz --port 8931 --tokens-file /.test(l)).length, 1)
  })

  test('each serving line really runs from the repository root: exit 0 and the tokens file written (serving stubbed)', async () => {
    // The history line names ./eurofxref-hist.zip in the folder it is run from: a scratch folder linking the shared file.
    const withHistory = join(scratch, 'readme-cwd')
    mkdirSync(withHistory, { recursive: true })
    if (existsSync(HISTORY_ZIP)) symlinkSync(HISTORY_ZIP, join(withHistory, 'eurofxref-hist.zip'))
    // The in-process issuer's lines; the --jwks-url line needs an authorization server, and runs in
    // authorization-server.test.ts against a real one.
    const serving = lines.filter((l) => !l.startsWith('npx quenchz tokens') && !l.includes('--jwks-url'))
    assert.equal(serving.length, 2)
    assert.equal(lines.filter((l) => l.includes('--jwks-url')).length, 1)
    for (const line of serving) {
      const argv = words(line)
      const cwd = argv.includes('--history') ? withHistory : REPO_ROOT
      if (cwd === withHistory && !existsSync(HISTORY_ZIP)) continue
      const tokens = argv[argv.indexOf('--tokens-file') + 1] as string
      try {
        const { code, err } = await run(argv, cwd)
        assert.equal(code, 0, err)
        assert.equal(err, written(tokens))
        assert.equal(JSON.parse(readFileSync(tokens, 'utf8')).url, 'http://127.0.0.1:8931/mcp')
      } finally {
        if (tokens.startsWith(tmpdir())) rmSync(dirname(tokens), { recursive: true, force: true })
      }
    }
  })

  test('the renewal line uses only the flags of `quenchz tokens`', () => {
    const renew = lines.filter((l) => l.startsWith('npx quenchz tokens'))
    assert.equal(renew.length, 1)
    const argv = words(renew[0] as string, { ...process.env, TOKENS: '/tmp/t.json' }).slice(1)
    for (const flag of argv.filter((a) => a.startsWith('--'))) assert.ok(flag.slice(2) in TOKENS_FLAGS, flag)
  })
})

describe('the hosts a bind answers for (allowListOf)', () => {
  const resource = 'https://quenchz.invalid/mcp'
  test('a wildcard bind answers the loopback names too, and the public URL’s host', () => {
    const list = allowListOf({ host: '0.0.0.0', resource: 'https://rates.example/mcp', allowedHosts: [] })
    for (const h of ['127.0.0.1', '127.0.0.1:*', 'localhost', 'localhost:*', 'rates.example']) {
      assert.ok(list.hosts.includes(h), h)
    }
    assert.ok(list.origins.includes('https://rates.example') && list.origins.includes('http://localhost:*'))
  })
  test('a specific non-loopback bind answers its own address, not the loopback names', () => {
    const list = allowListOf({ host: '192.0.2.7', resource, allowedHosts: ['gw.internal:8443'] })
    assert.deepEqual(list.hosts, ['192.0.2.7', '192.0.2.7:*', 'quenchz.invalid', 'gw.internal:8443'])
  })
})
