// Where the live source keeps its SQLite cache when --cache is not given, and how it is kept bounded.
//
// The default folder is the first of these that applies:
//   1. $CACHE_DIRECTORY: what systemd sets for a unit with CacheDirectory= (the first one, when several are listed).
//   2. $XDG_CACHE_HOME/quenchz, when XDG_CACHE_HOME is an absolute path (the XDG rule: a relative one is ignored).
//   3. $HOME/.cache/quenchz, when HOME names a folder that exists and this user may write in (or its .cache).
//   4. <os.tmpdir()>/quenchz-cache-<uid>: a service user with no home (HOME unset, /nonexistent, read-only). The
//      folder is made owner-only (0700); one that exists already must be a real folder, this user's, and not
//      writable by anyone else, else it is refused (another user could have made it to read or poison the cache).
//
// Pruning: answers fetched longer ago than the age bound are deleted, then the oldest until the answers' bytes fit
// the size bound; at start and every hour. A pruned answer is fetched again when asked for: only time is lost.
import { accessSync, constants, lstatSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import Database from 'better-sqlite3'

/** The cache file's name inside its folder. */
export const CACHE_FILE_NAME = 'ecb-live.sqlite'
/** Default bound on the cached answers' bytes, MiB. */
export const DEFAULT_CACHE_MAX_MIB = 256
/** Default bound on a cached answer's age, days. */
export const DEFAULT_CACHE_MAX_AGE_DAYS = 30
/** How often a running server prunes its cache, ms. */
export const CACHE_PRUNE_INTERVAL_MS = 3_600_000

/** Which rule chose the default folder (for tests and the start line). */
export type CacheFolderRule = 'CACHE_DIRECTORY' | 'XDG_CACHE_HOME' | 'HOME' | 'tmpdir'

/** The default cache file and the rule that chose it, or a one-line problem (only the tmpdir fallback can fail). */
export function defaultCacheLocation(
  env: NodeJS.ProcessEnv,
  uid: number = process.getuid?.() ?? 0,
  temp: string = tmpdir(),
): { file: string; rule: CacheFolderRule } | { problem: string } {
  const systemd = env.CACHE_DIRECTORY?.split(':')[0]
  if (systemd !== undefined && isAbsolute(systemd))
    return { file: join(systemd, CACHE_FILE_NAME), rule: 'CACHE_DIRECTORY' }
  const xdg = env.XDG_CACHE_HOME
  if (xdg !== undefined && isAbsolute(xdg))
    return { file: join(xdg, 'quenchz', CACHE_FILE_NAME), rule: 'XDG_CACHE_HOME' }
  const home = env.HOME
  if (home !== undefined && isAbsolute(home) && homeUsable(home))
    return { file: join(home, '.cache', 'quenchz', CACHE_FILE_NAME), rule: 'HOME' }
  const folder = join(temp, `quenchz-cache-${uid}`)
  const problem = ownPrivateFolder(folder, uid)
  if (problem !== undefined) return { problem }
  return { file: join(folder, CACHE_FILE_NAME), rule: 'tmpdir' }
}

/** HOME exists and this user may write its .cache (or, with no .cache yet, HOME itself). */
function homeUsable(home: string): boolean {
  for (const folder of [join(home, '.cache'), home]) {
    try {
      if (!lstatSync(folder).isDirectory()) return false
    } catch {
      continue
    }
    try {
      accessSync(folder, constants.W_OK | constants.X_OK)
      return true
    } catch {
      return false
    }
  }
  return false
}

/** Makes `folder` 0700, or checks that the one there is a real folder of `uid` that no one else may write. */
function ownPrivateFolder(folder: string, uid: number): string | undefined {
  try {
    mkdirSync(folder, { mode: 0o700 })
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST')
      return `cannot make the cache folder ${folder} (${(error as { code?: string }).code ?? 'error'}); choose a cache file with --cache`
  }
  const stat = lstatSync(folder)
  if (!stat.isDirectory() || stat.uid !== uid || (stat.mode & 0o022) !== 0)
    return `the cache folder ${folder} is not a private folder of this user; choose a cache file with --cache`
  return undefined
}

/** What one pruning removed. */
export interface PruneReport {
  removedByAge: number
  removedBySize: number
  /** Bytes of the answers kept. */
  keptBytes: number
}

/**
 * Deletes cached answers older than `maxAgeMs`, then the oldest until the rest's bytes fit `maxBytes`. Works on the
 * live source's `answers` table through a connection of its own (SQLite's WAL lets it run beside the source's); a
 * file without that table (never filled) is left alone.
 */
export function pruneCache(
  file: string,
  limits: { maxBytes: number; maxAgeMs: number },
  nowMs = Date.now(),
): PruneReport {
  const db = new Database(file, { fileMustExist: true })
  try {
    db.pragma('busy_timeout = 1000')
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'answers'").get()
    if (table === undefined) return { removedByAge: 0, removedBySize: 0, keptBytes: 0 }
    return db.transaction(() => {
      const removedByAge = db
        .prepare('DELETE FROM answers WHERE fetched_at_ms < ?')
        .run(nowMs - limits.maxAgeMs).changes
      const rows = db
        .prepare('SELECT url, length(body) + length(url) AS bytes FROM answers ORDER BY fetched_at_ms DESC, url')
        .all() as Array<{ url: string; bytes: number }>
      let kept = 0
      const remove = db.prepare('DELETE FROM answers WHERE url = ?')
      let removedBySize = 0
      for (const row of rows) {
        if (kept + row.bytes <= limits.maxBytes) kept += row.bytes
        else {
          remove.run(row.url)
          removedBySize++
        }
      }
      return { removedByAge, removedBySize, keptBytes: kept }
    })()
  } finally {
    db.close()
  }
}
