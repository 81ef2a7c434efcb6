// Runs the preflight CLI as a real subprocess (from TypeScript sources through tsx), for tests and validation.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** apps/preflight, absolute. */
export const APP_DIR = fileURLToPath(new URL('..', import.meta.url))
/** The CLI entry in sources. */
export const CLI_SOURCE = join(APP_DIR, 'src', 'cli.ts')
const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href

/** What one CLI run produced. */
export interface CliRun {
  stdout: string
  stderr: string
  status: number | null
  signal: NodeJS.Signals | null
}

/** The exact form of every output line: sorted keys, no spaces, one newline. */
export const LINE_FORM = /^\{"diagnostic":"[a-z0-9_]+","exit_code":[0-4],"outcome":"[a-z_]+","version":"0\.1\.0"\}\n$/

/**
 * Runs `preflight ...args` in `cwd`. stdin stays open and unwritten: a CLI that read stdin would hang and be
 * killed after `timeoutMs`, which shows up as status null. `preload` adds a module imported before the CLI.
 */
export function runCliProcess(
  args: readonly string[],
  options: { cwd?: string; preload?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  const nodeArgs = ['--conditions=@tollgate/source', '--import', TSX_LOADER]
  if (options.preload !== undefined) nodeArgs.push('--import', pathToFileURL(options.preload).href)
  nodeArgs.push(CLI_SOURCE, ...args)
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArgs, { cwd: options.cwd ?? APP_DIR, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000)
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on('close', (status, signal) => {
      clearTimeout(timer)
      child.stdin.destroy()
      resolve({ stdout, stderr, status, signal })
    })
  })
}

/** Parses the CLI's line (our own output, a fixed form) into its fields; undefined when the form is wrong. */
export function parseLine(stdout: string): { diagnostic: string; exit_code: number; outcome: string } | undefined {
  if (!LINE_FORM.test(stdout)) return undefined
  return JSON.parse(stdout) as { diagnostic: string; exit_code: number; outcome: string }
}
