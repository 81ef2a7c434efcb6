// quenchz's CLI as its own process, from source (as bin/quenchz.js runs the built one): started, watched through its
// stderr (the "listening" line and every JSON log line), stopped with SIGTERM; or run to its exit.
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const RUN_CLI = fileURLToPath(new URL('./run-cli.ts', import.meta.url))
// Resolved here: the process runs in a temp directory, where a bare 'tsx' would not resolve.
export const NODE_ARGS = ['--conditions=@tollgate/source', '--import', import.meta.resolve('tsx'), RUN_CLI]

export interface CliProcess {
  child: ChildProcess
  /** The URL of the "quenchz listening on URL …" line. */
  url: string
  /** The port of `url`. */
  port: number
  /** The URL of the "quenchz admin listening on URL …" line, when ARGS had --admin-port. */
  admin: string | undefined
  /** Every JSON line it has logged so far (pino, on stderr). */
  logs: Array<Record<string, unknown>>
  /** Everything it has written to stderr so far. */
  err(): string
  /** Its exit code once it has exited (null when a signal ended it). */
  exited: Promise<number | null>
  stop(): Promise<void>
}

/**
 * Starts `quenchz ARGS` in `cwd` and resolves once it says it listens (and, with --admin-port, that its admin
 * listener does too); rejects with its stderr if it exits first.
 */
export async function startCliProcess(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliProcess> {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  })
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const wantsAdmin = args.includes('--admin-port')
  const logs: Array<Record<string, unknown>> = []
  let pending = ''
  let all = ''
  let url: string | undefined
  let admin: string | undefined
  await new Promise<void>((resolve, reject) => {
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      all += chunk
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() as string
      for (const line of lines) {
        if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>)
        url ??= /^quenchz listening on (\S+) /.exec(line)?.[1]
        admin ??= /^quenchz admin listening on (\S+) /.exec(line)?.[1]
        if (url !== undefined && (!wantsAdmin || admin !== undefined)) resolve()
      }
    })
    child.once('exit', (code) => reject(new Error(`quenchz exited ${code} before listening: ${all}`)))
  })
  return {
    child,
    url: url as string,
    port: Number(new URL(url as string).port),
    admin,
    logs,
    err: () => all,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** Runs `quenchz ARGS` in `cwd` to its exit: its exit code and everything it wrote to stderr. */
export async function runCliToExit(args: string[], cwd: string): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (c: string) => {
    err += c
  })
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)))
  return { code, err }
}

/** The tokens the CLI wrote to its --tokens-file, by name (quietForThisResource, greedyForThisResource, …). */
export const tokensOf = (path: string) =>
  (JSON.parse(readFileSync(path, 'utf8')) as { tokens: Record<string, string> }).tokens
