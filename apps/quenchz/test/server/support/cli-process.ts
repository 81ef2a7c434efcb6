// quenchz's CLI as its own process, from source (as bin/quenchz.js runs the built one): started, watched through its
// stderr (the "listening" line and every JSON log line), stopped with SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const RUN_CLI = fileURLToPath(new URL('./run-cli.ts', import.meta.url))
// Resolved here: the process runs in a temp directory, where a bare 'tsx' would not resolve.
const NODE_ARGS = ['--conditions=@tollgate/source', '--import', import.meta.resolve('tsx'), RUN_CLI]

export interface CliProcess {
  child: ChildProcess
  /** The URL of the "quenchz listening on URL …" line. */
  url: string
  /** Every JSON line it has logged so far (pino, on stderr). */
  logs: Array<Record<string, unknown>>
  stop(): Promise<void>
}

/** Starts `quenchz ARGS` in `cwd` and resolves once it says it listens; rejects with its stderr if it exits first. */
export async function startCliProcess(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<CliProcess> {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
    cwd,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...env },
  })
  const logs: Array<Record<string, unknown>> = []
  let pending = ''
  let all = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      all += chunk
      pending += chunk
      const lines = pending.split('\n')
      pending = lines.pop() as string
      for (const line of lines) {
        if (line.startsWith('{')) logs.push(JSON.parse(line) as Record<string, unknown>)
        const listening = /^quenchz listening on (\S+) /.exec(line)
        if (listening) resolve(listening[1] as string)
      }
    })
    child.once('exit', (code) => reject(new Error(`quenchz exited ${code} before listening: ${all}`)))
  })
  return {
    child,
    url,
    logs,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((r) => child.once('exit', () => r()))
      child.kill('SIGTERM')
      await exited
    },
  }
}
