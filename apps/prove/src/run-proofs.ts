// Starts quenchz with a temporary tokens file, waits for its manifest and metadata endpoint, proves, stops it.
// Usage: node dist/run-proofs.js   (env QUENCHZ_PORT: port, default a free one; QUENCHZ_FROM=dist: run the built bin;
// QUENCHZ_ARGS: extra CLI arguments, e.g. "--source recordings --recordings DIR").
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RUNNER_FLAGS, RUNNER_HELP, readCommandLine } from './command-line.js'
import { EXIT, proveFromManifest } from './prove.js'

const WAIT_MS = 60_000
const POLL_MS = 150

/** The repository root, from this file's place in apps/prove/{src,dist}. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
}

/** The command that starts quenchz: the built bin when asked for (and built), else the sources through tsx. */
export function serverCommand(env: NodeJS.ProcessEnv = process.env): string[] {
  const built = join(REPO_ROOT, 'apps', 'quenchz', 'bin', 'quenchz.js')
  if (env.QUENCHZ_FROM === 'dist' && existsSync(join(REPO_ROOT, 'apps', 'quenchz', 'dist', 'cli.js'))) return [built]
  return [
    '--conditions=@tollgate/source',
    '--import',
    'tsx',
    join(REPO_ROOT, 'apps', 'quenchz', 'bin', 'quenchz-source.mjs'),
  ]
}

/**
 * The server's arguments: the frozen budget clock the budget proofs' arithmetic needs (quenchz serves on the wall
 * clock by default), and, unless QUENCHZ_ARGS names a source, the shared history file (quenchz's own default, the
 * live ECB API, needs the internet and answers differently every day).
 */
export function serverArgs(port: number, manifest: string, extra: readonly string[], env = process.env): string[] {
  const shared = env.TOLLGATE_SHARED ?? join(REPO_ROOT, '..', 'shared')
  const history = join(shared, 'data', 'ecb', 'eurofxref-hist.zip')
  const source = extra.includes('--source') ? [] : ['--source', 'history', '--history', history]
  return ['--port', String(port), '--tokens-file', manifest, '--budget-clock', 'frozen', ...source, ...extra]
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Whether `port` on 127.0.0.1 is free: the runner says so before starting a server that could not listen. */
async function portInUse(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
    probe.once('error', (error: Error & { code?: string }) => resolve(error.code === 'EADDRINUSE'))
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(false)))
  })
}

/** Runs the whole proof; resolves with the exit code. `argv` takes `--port N`, `-h`/`--help`, `--version`. */
export async function runProofs(
  out: (line: string) => void,
  err: (line: string) => void,
  argv: readonly string[] = [],
): Promise<number> {
  const line = readCommandLine(argv, { help: RUNNER_HELP, table: RUNNER_FLAGS, positionals: 0 }, { out, err })
  if ('exit' in line) return line.exit
  const chosen = line.values.options.port ?? (process.env.QUENCHZ_PORT || undefined)
  if (chosen !== undefined && !/^\d{1,5}$/.test(chosen)) {
    err('prove: --port (or QUENCHZ_PORT) must be an integer from 1 to 65535')
    err('see prove --help')
    return EXIT.cannotRun
  }
  const port = chosen !== undefined ? Number(chosen) : await freePort()
  if (port < 1 || port > 65535) {
    err('prove: --port (or QUENCHZ_PORT) must be an integer from 1 to 65535')
    err('see prove --help')
    return EXIT.cannotRun
  }
  if (chosen !== undefined && (await portInUse(port))) {
    err(
      `prove: port ${port} on 127.0.0.1 is already in use; choose another with --port N, or leave it out for a free one`,
    )
    return EXIT.cannotRun
  }
  const dir = mkdtempSync(join(tmpdir(), 'quenchz-proof-'))
  const manifest = join(dir, 'manifest.json')
  const extra = (process.env.QUENCHZ_ARGS ?? '').split(/\s+/).filter((a) => a !== '')
  let child: ChildProcess | undefined
  let exited = false
  const cleanup = () => {
    if (child && !exited) child.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
  const onSignal = (code: number) => () => {
    cleanup()
    process.exit(code)
  }
  const handlers: Array<[NodeJS.Signals, () => void]> = [
    ['SIGINT', onSignal(130)],
    ['SIGTERM', onSignal(143)],
    ['SIGHUP', onSignal(129)],
  ]
  for (const [signal, handler] of handlers) process.once(signal, handler)
  process.once('exit', cleanup)
  try {
    child = spawn(process.execPath, [...serverCommand(), ...serverArgs(port, manifest, extra)], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    child.stderr?.on('data', (chunk: Buffer) => err(chunk.toString('utf8').trimEnd()))
    child.once('exit', () => {
      exited = true
    })
    const deadline = Date.now() + WAIT_MS
    while (!existsSync(manifest)) {
      if (exited || Date.now() > deadline) {
        err('the server never wrote its token manifest')
        return EXIT.cannotRun
      }
      await sleep(POLL_MS)
    }
    const metadata = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`
    for (;;) {
      const ok = await fetch(metadata, { signal: AbortSignal.timeout(2000) }).then(
        (r) => r.ok,
        () => false,
      )
      if (ok) break
      if (exited || Date.now() > deadline) {
        err('the server never started listening')
        return EXIT.cannotRun
      }
      await sleep(POLL_MS)
    }
    return await proveFromManifest(manifest, out, err)
  } finally {
    if (child && !exited) {
      const gone = new Promise<void>((r) => child?.once('exit', () => r()))
      child.kill('SIGTERM')
      await Promise.race([gone, sleep(5000)])
    }
    cleanup()
    for (const [signal, handler] of handlers) process.off(signal, handler)
    process.off('exit', cleanup)
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.exitCode = await runProofs(
    (l) => process.stdout.write(`${l}\n`),
    (l) => process.stderr.write(`${l}\n`),
    process.argv.slice(2),
  )
}
