// Servers as child processes (so a test can SIGKILL one), started from the workspaces' TypeScript sources.
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

// Resolved here: the children run in temp directories, where a bare 'tsx' would not resolve.
const NODE_ARGS = ['--conditions=@tollgate/source', '--import', import.meta.resolve('tsx')]
const RUNNERS = {
  quenchz: fileURLToPath(new URL('./run-quenchz.ts', import.meta.url)),
  provider: fileURLToPath(new URL('./run-provider.ts', import.meta.url)),
}

export interface ServerProcess {
  child: ChildProcess
  url: string
  /** Everything the process wrote to stderr so far. */
  stderr(): string
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>
  /** SIGKILL (a crash), then waits for the exit. */
  kill(): Promise<void>
}

/**
 * Starts `runner` with `args` in `cwd`, resolving once a stderr line matches `listening` (its first group is the URL).
 * Rejects with the process's output when it exits first or does not listen within `timeoutMs`.
 */
export async function startServerProcess(
  runner: keyof typeof RUNNERS,
  args: string[],
  cwd: string,
  listening: RegExp,
  env: NodeJS.ProcessEnv = process.env,
  timeoutMs = 30_000,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...NODE_ARGS, RUNNERS[runner], ...args], {
    cwd,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let err = ''
  child.stderr?.setEncoding('utf8')
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const halt = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    await exited
  }
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${runner} did not listen within ${timeoutMs} ms: ${err}`))
    }, timeoutMs)
    child.stderr?.on('data', (chunk: string) => {
      err += chunk
      // Whole lines only: a chunk may end mid-line, with the URL half-written.
      const m = listening.exec(err.slice(0, err.lastIndexOf('\n') + 1))
      if (m?.[1] !== undefined) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${runner} exited (${code ?? signal}) before listening: ${err}`))
    })
  })
  return { child, url, stderr: () => err, stop: () => halt('SIGTERM'), kill: () => halt('SIGKILL') }
}
