// The seeds' recorded data (../shared: seeds, spec digests, ECB recordings) is read in place, never copied. Suites
// that need it skip with the reason when it is absent, unless TOLLGATE_REQUIRE_SERVICES=1 (CI), where absence fails:
// a CI run must never pass by skipping the very tests the data exists for.
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The repository root: $TOLLGATE_REPO_ROOT (set by scripts/test.mjs), else three folders above this file. */
export const REPO_ROOT = process.env.TOLLGATE_REPO_ROOT ?? resolve(fileURLToPath(new URL('../../../', import.meta.url)))

/** `$TOLLGATE_SHARED`, else `<repo>/../shared`; whether or not it exists. */
export function sharedDir(): string {
  return process.env.TOLLGATE_SHARED ?? resolve(REPO_ROOT, '..', 'shared')
}

export interface SharedData {
  /** Absolute path of the file or folder under the shared directory. */
  path: string
  /** Why the suite skips (for `test(name, { skip })`), or false when the data is there. */
  skip: string | false
}

/**
 * Locates `relative` (e.g. 'data/ecb/eurofxref-hist.zip') under the shared directory. Absent: a skip reason, or,
 * with TOLLGATE_REQUIRE_SERVICES=1, an Error thrown here so the suite fails instead of skipping.
 */
export function findSharedData(relative: string): SharedData {
  const path = join(sharedDir(), relative)
  if (existsSync(path)) return { path, skip: false }
  const reason = `needs ${relative} under the shared data directory (${sharedDir()}; set TOLLGATE_SHARED), absent here`
  if (process.env.TOLLGATE_REQUIRE_SERVICES === '1') throw new Error(`${reason}, and TOLLGATE_REQUIRE_SERVICES=1`)
  return { path, skip: reason }
}
