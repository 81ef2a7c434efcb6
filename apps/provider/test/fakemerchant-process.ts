// fakemerchant as the tests run it: a real child process from the TypeScript sources, its output collected.
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { SECRET } from './helpers.js'

const APP = fileURLToPath(new URL('..', import.meta.url))

export interface FakemerchantProcess {
  child: ChildProcess
  /** Everything it printed so far. */
  stdout(): string
  stderr(): string
  /** Its exit code, once it exited and its output is complete ('close'). */
  exited: Promise<number | null>
  /** Resolves once its stdout matches pattern; rejects with its exit code and stderr if it exits first. */
  printed(pattern: RegExp): Promise<RegExpExecArray>
  /** Resolves with the MCP URL once it prints "serving <url>" (see printed). */
  serving(): Promise<string>
  /** Its stderr lines written for a person: the server's JSON log lines (also on stderr) left out. */
  said(): string[]
  /** Resolves once `line` is among said(); fails after ~10 s or when it exits first. */
  says(line: string): Promise<void>
}

/**
 * Runs `fakemerchant ...args`. env is the whole environment of the child (default: this process's with the tests'
 * SIGNING_SECRET).
 */
export function runFakemerchant(
  args: readonly string[],
  env: NodeJS.ProcessEnv = { ...process.env, SIGNING_SECRET: SECRET },
): FakemerchantProcess {
  const child = spawn(
    process.execPath,
    ['--conditions=@tollgate/source', '--import', 'tsx', 'src/fakemerchant.ts', ...args],
    { cwd: APP, env, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  let out = ''
  let err = ''
  const waiting = new Set<() => void>()
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d
    for (const check of waiting) check()
  })
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err += d
  })
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  const printed = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(out)
        if (m === null) return
        waiting.delete(check)
        resolve(m)
      }
      waiting.add(check)
      check()
      void exited.then((code) =>
        reject(Object.assign(new Error(`fakemerchant exited ${code}: ${err}`), { code, stderr: err, stdout: out })),
      )
    })
  const said = () => err.split('\n').filter((l) => l !== '' && !l.startsWith('{'))
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    printed,
    serving: () => printed(/serving (http:\/\/\S+)/).then((m) => m[1] as string),
    said,
    says: async (line) => {
      for (let i = 0; !said().includes(line); i++) {
        if (i > 200 || child.exitCode !== null) throw new Error(`fakemerchant did not say ${line}: ${err}`)
        await new Promise((r) => setTimeout(r, 50))
      }
    },
  }
}
