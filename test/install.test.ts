// Each CLI installs the way users install Node tools: `npm pack` in the app, `npm install -g ./tarball` into an empty
// prefix, then the commands run from an unrelated folder. One install of the five tarballs, then real runs: preflight
// checks the seed's example; the installed providercheck passes all its checks against the installed fakemerchant;
// the installed prove proves the installed quenchz.
// No network: npm resolves through a loopback registry serving the locked versions from the local npm cache (see
// support/loopback-registry.ts), and better-sqlite3 gets the native binary this checkout already built as its
// prebuild, so the install compiles nothing.
import assert from 'node:assert/strict'
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { type LoopbackRegistry, startLoopbackRegistry } from './support/loopback-registry.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const APPS = ['apps/preflight', 'apps/provider', 'apps/providercheck', 'apps/quenchz', 'apps/prove']
const BINS = ['preflight', 'fakemerchant', 'providercheck', 'quenchz', 'prove']
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Starts a long-running installed command and resolves once a stdout line matches `ready`. */
function startServer(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    // Bounded: a server that never says it is ready fails the test instead of hanging it.
    const timer = setTimeout(() => {
      child.kill('SIGTERM')
      reject(new Error(`${command} was not ready within 60 s:\n${output}`))
    }, 60_000)
    const onData = (d: string) => {
      output += d
      const match = output.match(ready)
      if (match !== null) {
        clearTimeout(timer)
        resolve({ child, match, output: () => output })
      }
    }
    child.stdout.setEncoding('utf8').on('data', onData)
    child.stderr.setEncoding('utf8').on('data', onData)
    child.once('error', reject)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${command} exited (${code}) before it was ready:\n${output}`))
    })
  })
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGTERM')
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0))
    })
  })
}

/** The better-sqlite3 binary this checkout built, packed the way prebuild-install looks for it. */
function localPrebuild(dir: string): string | undefined {
  const pkgDir = join(ROOT, 'node_modules', 'better-sqlite3')
  const binary = join(pkgDir, 'build', 'Release', 'better_sqlite3.node')
  if (!existsSync(binary)) return undefined
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  mkdirSync(dir, { recursive: true })
  execFileSync('tar', ['czf', join(dir, name), '-C', pkgDir, 'build/Release/better_sqlite3.node'])
  return dir
}

describe('installed from npm pack tarballs into an empty prefix', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'tollgate-install-'))
  const elsewhere = join(work, 'elsewhere')
  const prefix = join(work, 'prefix')
  const bin = (name: string) => join(prefix, 'bin', name)
  let registry: LoopbackRegistry | undefined
  let env: NodeJS.ProcessEnv

  before(async () => {
    mkdirSync(elsewhere)
    const tarballs = join(work, 'tarballs')
    mkdirSync(tarballs)
    const pack = await run(NPM, ['pack', '--pack-destination', tarballs, ...APPS.flatMap((a) => ['-w', a])], {
      cwd: ROOT,
    })
    assert.equal(pack.code, 0, `npm pack failed:\n${pack.stderr}`)
    const packed = readdirSync(tarballs).filter((f) => f.endsWith('.tgz'))
    assert.equal(packed.length, APPS.length, packed.join(', '))
    // prepack's shrinkwrap is removed again by postpack: the working tree stays as it was.
    for (const app of APPS) assert.equal(existsSync(join(ROOT, app, 'npm-shrinkwrap.json')), false, app)

    const npmCache = execFileSync(NPM, ['config', 'get', 'cache'], { encoding: 'utf8' }).trim()
    registry = await startLoopbackRegistry(join(ROOT, 'package-lock.json'), npmCache)
    const prebuilds = localPrebuild(join(work, 'prebuilds'))
    env = {
      ...process.env,
      npm_config_registry: registry.url,
      // A cache of its own: nothing the loopback registry serves lands in the user's cache.
      npm_config_cache: join(work, 'npm-cache'),
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
      ...(prebuilds !== undefined && { npm_config_better_sqlite3_local_prebuilds: prebuilds }),
    }
    const install = await run(
      NPM,
      ['install', '-g', '--prefix', prefix, '--allow-scripts=better-sqlite3', ...packed.map((f) => join(tarballs, f))],
      { cwd: elsewhere, env },
    )
    const missing =
      registry.missing.length > 0 ? `\nnot in the npm cache (${npmCache}): ${registry.missing.join(', ')}` : ''
    assert.equal(install.code, 0, `npm install -g failed:${missing}\n${install.stderr.slice(-4000)}`)
  })

  after(async () => {
    await registry?.close()
    rmSync(work, { recursive: true, force: true })
  })

  test('every command is on the prefix PATH', () => {
    for (const name of BINS) assert.ok(existsSync(bin(name)), name)
  })

  test('the installed package holds the bundle and no workspace library', () => {
    const installed = join(prefix, 'lib', 'node_modules', '@tollgate')
    assert.deepEqual(readdirSync(installed).sort(), ['preflight', 'prove', 'provider', 'providercheck', 'quenchz'])
    for (const app of readdirSync(installed)) {
      const nested = join(installed, app, 'node_modules', '@tollgate')
      assert.equal(existsSync(nested), false, `${app} installed a @tollgate dependency`)
      const manifest = JSON.parse(readFileSync(join(installed, app, 'package.json'), 'utf8')) as { version: string }
      assert.equal(manifest.version, VERSION, app)
    }
  })

  test('preflight checks the seed example from another folder', async () => {
    copyFileSync(join(ROOT, 'apps/preflight/examples/01-current_control.json'), join(elsewhere, 'receipt.json'))
    const r = await run(bin('preflight'), ['receipt.json'], { cwd: elsewhere })
    assert.equal(
      r.stdout,
      `{"diagnostic":"educational_expected_match","exit_code":0,"outcome":"consistent_sample","version":"${VERSION}"}\n`,
    )
    assert.equal(r.code, 0)
  })

  test('fakemerchant prints its version, and the installed providercheck passes against it', async () => {
    const version = await run(bin('fakemerchant'), ['--version'], { cwd: elsewhere })
    assert.equal(version.stdout, `fakemerchant ${VERSION}\n`)
    const secret = `srmps_${'0123456789abcdef'.repeat(2)}`
    const server = await startServer(
      bin('fakemerchant'),
      ['--port', '0'],
      { cwd: elsewhere, env: { ...process.env, SIGNING_SECRET: secret } },
      /serving (http:\/\/\S+\/mcp)/,
    )
    try {
      const check = await run(
        bin('providercheck'),
        [
          '-sandbox',
          '-transport',
          'mcp',
          '-allow-private',
          '-base-url',
          server.match[1] as string,
          '-tenant',
          '0199a3c1-0a0b-7c0d-8e0f-101112131415',
          '-customer',
          'cus_1001',
          '-transaction',
          'ch_1001',
          '-subscription',
          'sub_1001',
        ],
        { cwd: elsewhere, env: { ...process.env, PROVIDERCHECK_SANDBOX_SIGNING_SECRET: secret } },
      )
      assert.equal(check.code, 0, `${check.stdout}\n${check.stderr}`)
      assert.doesNotMatch(check.stdout, /\bFAIL\b/)
    } finally {
      await stop(server.child)
    }
  })

  test('the installed prove proves the installed quenchz', async () => {
    const recordings = join(work, 'recordings')
    mkdirSync(recordings)
    // An empty recordings index: a source that opens anywhere, so this needs no shared data.
    writeFileSync(join(recordings, 'index.json'), '[]')
    const tokens = join(work, 'quenchz-tokens.json')
    const port = await freePort()
    const server = await startServer(
      bin('quenchz'),
      // The frozen budget clock is what the proofs ask for (the served default refills on the wall clock).
      [
        '--port',
        String(port),
        '--tokens-file',
        tokens,
        '--budget-clock',
        'frozen',
        '--source',
        'recordings',
        '--recordings',
        recordings,
      ],
      { cwd: elsewhere, env: process.env },
      /listening on http:\/\//,
    )
    try {
      const proof = await run(bin('prove'), [tokens], { cwd: elsewhere })
      assert.equal(proof.code, 0, `${proof.stdout}\n${proof.stderr}`)
      assert.match(proof.stdout, /(\d+) of \1 checks passed\./)
    } finally {
      await stop(server.child)
    }
  })
})
