// The worked example (examples/merchant-billing) as an operator runs it: its server as a child process configured by
// the environment, HAProxy on the shipped deploy/haproxy.cfg, providercheck and the official MCP clients as child
// processes that trust a test CA through NODE_EXTRA_CA_CERTS (read by Node at start only, hence the children).
import { type ChildProcess, spawn } from 'node:child_process'
import { request } from 'node:https'
import { createServer } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { fileURLToPath } from 'node:url'

const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
export const EXAMPLE_SERVER = `${REPO}examples/merchant-billing/src/server.ts`
export const EXAMPLE_HAPROXY_CONFIG = `${REPO}examples/merchant-billing/deploy/haproxy.cfg`
export const EXAMPLE_SYSTEMD_UNIT = `${REPO}examples/merchant-billing/deploy/merchant-billing.service`
const PROVIDERCHECK_CLI = `${REPO}apps/providercheck/src/cli.ts`
const LIST_TOOLS = fileURLToPath(new URL('./list-tools-child.ts', import.meta.url))
// Resolved here: the children run in temp directories, where a bare 'tsx' would not resolve.
const NODE_ARGS = ['--conditions=@tollgate/source', '--import', import.meta.resolve('tsx')]

export interface ChildRun {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a TypeScript entry point to its end. */
async function runTs(entry: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<ChildRun> {
  const child = spawn(process.execPath, [...NODE_ARGS, entry, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd !== undefined && { cwd }),
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c
  })
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c
  })
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)))
  return { code, stdout, stderr }
}

/**
 * The providercheck command line (its sources), the CA trusted through NODE_EXTRA_CA_CERTS; the secret in
 * PROVIDERCHECK_SANDBOX_SIGNING_SECRET, or PROVIDERCHECK_LIVE_SIGNING_SECRET for `live` (args then say -live).
 */
export function runProvidercheckCli(
  args: string[],
  secret: string,
  caFile: string,
  mode: 'sandbox' | 'live' = 'sandbox',
): Promise<ChildRun> {
  const {
    NODE_TEST_CONTEXT: _,
    PROVIDERCHECK_SANDBOX_SIGNING_SECRET: _sandbox,
    PROVIDERCHECK_LIVE_SIGNING_SECRET: _live,
    ...env
  } = process.env
  return runTs(PROVIDERCHECK_CLI, args, {
    ...env,
    NODE_EXTRA_CA_CERTS: caFile,
    [mode === 'live' ? 'PROVIDERCHECK_LIVE_SIGNING_SECRET' : 'PROVIDERCHECK_SANDBOX_SIGNING_SECRET']: secret,
    NO_COLOR: '1',
  })
}

/** An official MCP client ('v1': SDK v1, 2025-11-25 sessions; 'v2': SDK v2, 2026-07-28) listing the tools at `url`. */
export async function listToolsOverHttps(
  era: 'v1' | 'v2',
  url: string,
  secret: string,
  caFile: string,
): Promise<{ tools: string[]; replicas: string[] }> {
  const { NODE_TEST_CONTEXT: _, ...env } = process.env
  const r = await runTs(LIST_TOOLS, [era, url], { ...env, NODE_EXTRA_CA_CERTS: caFile, SIGNING_SECRET: secret })
  if (r.code !== 0) throw new Error(`the ${era} client failed (${r.code}): ${r.stderr}`)
  return JSON.parse(r.stdout) as { tools: string[]; replicas: string[] }
}

export interface ExampleServer {
  child: ChildProcess
  /** The MCP endpoint the server printed (its own address: http(s)://host:port/mcp). */
  url: string
  /** host:port it listens on. */
  hostPort: string
  /** The admin listener's base URL (/metrics, /livez, /readyz) when ADMIN_PORT was set. */
  adminUrl: string | undefined
  stderr(): string
  /** Resolves once stderr holds `count` lines matching `pattern` (nothing else to wait on for a reload). */
  waitForLog(pattern: RegExp, count?: number): Promise<void>
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>
  kill(): Promise<void>
}

/** Starts the example's server with `env` (its whole configuration), resolving once it prints its address. */
export async function startExampleServer(env: Record<string, string>, cwd: string): Promise<ExampleServer> {
  const { NODE_TEST_CONTEXT: _, ...inherited } = process.env
  // Only the test's variables configure it: none of the example's variables leak in from this process.
  const child = spawn(process.execPath, [...NODE_ARGS, EXAMPLE_SERVER], {
    cwd,
    env: { PATH: inherited.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  const waiters = new Set<() => void>()
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    err += c
    for (const w of waiters) w()
  })
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)))
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c
      const m = /MCP at (\S+),.*\n/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.once('exit', (code, signal) => reject(new Error(`the example exited (${code ?? signal}): ${err}`)))
  })
  const waitForLog = (pattern: RegExp, count = 1) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        // Whole lines only (the last, unless ended by '\n', is still being written).
        const seen = err
          .split('\n')
          .slice(0, -1)
          .filter((l) => pattern.test(l)).length
        if (seen >= count) {
          waiters.delete(check)
          resolve()
        } else if (child.exitCode !== null) {
          waiters.delete(check)
          reject(new Error(`the example exited before logging ${pattern}: ${err}`))
        }
      }
      waiters.add(check)
      check()
    })
  return {
    child,
    url,
    hostPort: new URL(url).host,
    adminUrl: /, admin at (\S+)/.exec(out)?.[1],
    stderr: () => err,
    waitForLog,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
      return await exited
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}

/** True when this process may listen on port 443 of 127.0.0.1 (root, and nothing holds it). */
export async function canBind443(): Promise<boolean> {
  if (process.getuid?.() !== 0) return false
  const server = createServer()
  return await new Promise((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(443, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

export interface HttpsAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
  /** The server certificate's SHA-256 fingerprint (AA:BB:…). */
  fingerprint256: string
}

/** One request on a fresh TLS connection to 127.0.0.1:`port`, trusting `ca`, SNI `localhost`. */
export function httpsRequest(
  port: number,
  ca: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        servername: 'localhost',
        ca,
        agent: false,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers ?? {},
      },
      (res) => {
        const fingerprint256 = (res.socket as TLSSocket).getPeerCertificate().fingerprint256
        let body = ''
        res.setEncoding('utf8').on('data', (c: string) => {
          body += c
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, fingerprint256 }))
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}
