import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import type { SourceConfig } from '../rates/index.js'

/** `$TOLLGATE_SHARED`, else `<repo>/../shared`, when that directory exists. */
export function sharedDir(repoRoot: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidate = env.TOLLGATE_SHARED ?? (repoRoot ? resolve(repoRoot, '..', 'shared') : undefined)
  return candidate !== undefined && existsSync(candidate) ? candidate : undefined
}

/**
 * The source used when no `--source` is given: the ECB history file under the shared data (every currency), else
 * the recordings directory, else undefined (the CLI then says which flag to pass).
 */
export function defaultSource(shared: string | undefined): SourceConfig | undefined {
  if (shared === undefined) return undefined
  const history = join(shared, 'data', 'ecb', 'eurofxref-hist.zip')
  if (existsSync(history)) return { kind: 'history', file: history }
  const recordings = join(shared, 'data', 'quenchz-cassettes')
  if (existsSync(join(recordings, 'index.json'))) return { kind: 'recordings', dir: recordings }
  return undefined
}
