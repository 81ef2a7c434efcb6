import { existsSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

/** The nearest ancestor of `start` (inclusive) holding a `.git` entry, or undefined. */
export function repositoryRoot(start: string): string | undefined {
  let dir = resolve(start)
  for (;;) {
    if (existsSync(resolve(dir, '.git'))) return realpath(dir)
    const up = dirname(dir)
    if (up === dir) return undefined
    dir = up
  }
}

/**
 * True when `target` (resolved against `cwd`, symlinks followed as far as the path exists) lies inside any of
 * `roots`. Used to refuse writing bearer tokens into a checkout, where they could be committed.
 */
export function isInside(target: string, roots: readonly string[], cwd = process.cwd()): boolean {
  const full = realpathOfNearest(resolve(cwd, target))
  return roots.some((root) => {
    const rel = relative(root, full)
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))
  })
}

function realpath(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

// The file usually does not exist yet: resolve its nearest existing ancestor, then re-append the rest.
function realpathOfNearest(p: string): string {
  let existing = p
  const rest: string[] = []
  while (!existsSync(existing)) {
    const up = dirname(existing)
    if (up === existing) break
    rest.unshift(existing.slice(up.length).replace(/^[/\\]/, ''))
    existing = up
  }
  return resolve(realpath(existing), ...rest)
}

/**
 * Never write bearer tokens (or the key that mints them) inside a checkout: neither this code's repository nor the
 * one we stand in. The refusal line, or undefined when `tokensPath` is elsewhere (or absent).
 */
export function tokensPathRefusal(tokensPath: string | undefined, cwd: string): string | undefined {
  if (tokensPath === undefined) return undefined
  const roots = [repositoryRoot(here), repositoryRoot(cwd)].filter((r): r is string => r !== undefined)
  return isInside(tokensPath, roots, cwd) ? `refusing to write tokens inside the repository: ${tokensPath}` : undefined
}
