// What the root tests that install packed tarballs share: a child-process runner, the better-sqlite3 binary this
// checkout built (as a local prebuild, so an install compiles nothing), and npm's environment for an isolated install
// through the loopback registry (a cache of its own, no audit, no funding notice).
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

export function run(command: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
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

/** The better-sqlite3 binary this checkout built, packed the way prebuild-install looks for it. */
export function localPrebuild(dir: string): string | undefined {
  const pkgDir = join(ROOT, 'node_modules', 'better-sqlite3')
  const binary = join(pkgDir, 'build', 'Release', 'better_sqlite3.node')
  if (!existsSync(binary)) return undefined
  const { version } = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { version: string }
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  mkdirSync(dir, { recursive: true })
  execFileSync('tar', ['czf', join(dir, name), '-C', pkgDir, 'build/Release/better_sqlite3.node'])
  return dir
}

/** The user's npm cache folder (read by the loopback registry; never written by these installs). */
export function userNpmCache(): string {
  return execFileSync(NPM, ['config', 'get', 'cache'], { encoding: 'utf8' }).trim()
}

/** npm's environment for an install from `registryUrl` with a cache of its own under `work`. */
export function isolatedNpmEnv(work: string, registryUrl: string): NodeJS.ProcessEnv {
  const prebuilds = localPrebuild(join(work, 'prebuilds'))
  return {
    ...process.env,
    npm_config_registry: registryUrl,
    // A cache of its own: nothing the loopback registry serves lands in the user's cache.
    npm_config_cache: join(work, 'npm-cache'),
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    ...(prebuilds !== undefined && { npm_config_better_sqlite3_local_prebuilds: prebuilds }),
  }
}
