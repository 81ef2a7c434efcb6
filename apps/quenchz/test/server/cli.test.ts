// The interop CLI: the tokens-path guard, the manifest it writes before listening, and its argument errors.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { main } from '../../src/cli.ts'
import { CASSETTES, NO_CASSETTES, REPO_ROOT } from './support/shared.ts'

const scratch = mkdtempSync(join(tmpdir(), 'quenchz-cli-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

async function run(argv: string[], cwd = scratch, env: NodeJS.ProcessEnv = process.env) {
  const lines: string[] = []
  const code = await main(argv, { stderr: (l) => lines.push(l), serve: false, cwd, env })
  return { code, err: lines.join('\n') }
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
    assert.equal(err, `tokens written to ${path}`)
    const text = readFileSync(path, 'utf8')
    assert.ok(text.endsWith('}\n'))
    assert.equal(statSync(path).mode & 0o777, 0o600)
    const manifest = JSON.parse(text)
    assert.deepEqual(Object.keys(manifest), ['url', 'callers', 'budget', 'tokens', 'source'])
    assert.equal(manifest.url, 'http://127.0.0.1:8931/mcp')
    assert.deepEqual(manifest.callers, { greedy: 'agent-alpha', quiet: 'agent-beta' })
    assert.deepEqual(manifest.budget, { capacity: 60, reserveFraction: 0.5, callerCount: 2, clock: 'frozen' })
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

describe('argument errors exit 2 with the usage', () => {
  const cases: Array<[string[], string]> = [
    [[], '--tokens-file is required'],
    [['--tokens-file', 'x.json', '--port', 'eighty'], '--port must be an integer from 0 to 65535'],
    [['--tokens-file', 'x.json', '--source', 'ftp'], '--source must be history, recordings or live'],
    [
      ['--tokens-file', 'x.json', '--source', 'history'],
      '--source history needs --history FILE (eurofxref-hist .zip or .csv)',
    ],
    [['--tokens-file', 'x.json', '--budget-clock', 'sundial'], '--budget-clock must be frozen or monotonic'],
    [['--tokens-file', 'x.json', '--bogus'], "Unknown option '--bogus'"],
  ]
  for (const [argv, first] of cases) {
    test(`${argv.join(' ') || '(no arguments)'} → ${first}`, async () => {
      const { code, err } = await run(argv)
      assert.equal(code, 2)
      assert.ok(err.startsWith(first), err)
      assert.match(err, /usage: quenchz --tokens-file PATH/)
    })
  }

  test('with no --source and no shared data, it names the flags to pass', async () => {
    const { code, err } = await run(['--tokens-file', join(scratch, 'n.json')], scratch, {
      ...process.env,
      TOLLGATE_SHARED: join(scratch, 'absent'),
    })
    assert.equal(code, 2)
    assert.ok(err.startsWith('no data source found under the shared data directory'), err)
    assert.match(err, /--source history --history FILE/)
  })
})
