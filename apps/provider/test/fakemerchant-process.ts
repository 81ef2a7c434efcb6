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
  /**
   * Resolves once its stdout's whole lines (those ended by '\n', or all of it once it exited) match pattern — never
   * a line still being written, as output arrives in chunks that may cut a line; rejects with its exit code and
   * stderr if it exits first.
   */
  printed(pattern: RegExp): Promise<RegExpExecArray>
  /** Resolves with the MCP URL once it prints "serving <url>" (see printed). */
  serving(): Promise<string>
  /** Its whole stderr lines written for a person: the server's JSON log lines (also on stderr) left out. */
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
  let closed = false
  // Output arrives in chunks that may end mid-line: only what ends with '\n' (or everything, once closed) is read.
  const whole = (text: string) => (closed ? text : text.slice(0, text.lastIndexOf('\n') + 1))
  const waiting = new Set<() => void>()
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    out += d
    if (d.includes('\n')) for (const check of waiting) check()
  })
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    err += d
  })
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      closed = true
      for (const check of waiting) check()
      resolve(code)
    }),
  )
  const printed = (pattern: RegExp) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const check = () => {
        const m = pattern.exec(whole(out))
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
  const said = () =>
    whole(err)
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('{'))
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
