import { closeSync, constants, existsSync, lstatSync, openSync } from 'node:fs'
import type { Diagnostic } from '../diagnostics.js'

/**
 * Linux exposes every open directory as /proc/self/fd/N: opening `/proc/self/fd/N/name` resolves `name` inside
 * that very directory (like openat), so a parent swapped for a symlink after we opened it cannot redirect us.
 */
export const PROC_FD_AVAILABLE = process.platform === 'linux' && existsSync('/proc/self/fd')

function openError(e: unknown): Diagnostic {
  switch ((e as NodeJS.ErrnoException | undefined)?.code) {
    case 'ELOOP':
    case 'EMLINK': // FreeBSD's answer to O_NOFOLLOW on a symlink
      return 'path_symlink'
    case 'ENOENT':
      return 'path_not_found'
    case 'ENOTDIR':
      return 'path_component_not_directory'
    case 'EACCES':
    case 'EPERM':
      return 'path_permission_denied'
    case 'ENXIO': // a socket, or a device with nothing behind it
    case 'EISDIR':
      return 'path_not_regular_file'
    default:
      return 'path_open_failed'
  }
}

/**
 * Opens the final component of `path` read-only with O_NOFOLLOW|O_NONBLOCK after opening every directory
 * component of the path as given with O_DIRECTORY|O_NOFOLLOW, so a symlink anywhere is refused. Returns the open
 * descriptor (the caller closes it and must still fstat it) or the refusal. `viaProcFd` chooses the openat-like
 * walk through /proc/self/fd (Linux) over re-resolving each prefix by name (elsewhere).
 */
export function openNoFollow(path: string, viaProcFd: boolean): { fd: number } | { refused: Diagnostic } {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants
  if (O_NOFOLLOW === undefined || O_NONBLOCK === undefined || O_DIRECTORY === undefined) {
    return { refused: 'platform_unsupported' }
  }
  if (path === '') return { refused: 'argument_empty_path' }
  if (path.includes('\0')) return { refused: 'path_open_failed' }
  const O_NOCTTY = constants.O_NOCTTY ?? 0

  const parts = path.split('/').filter((p) => p !== '')
  const trailingSlash = path.endsWith('/')
  const dirs = trailingSlash ? parts : parts.slice(0, -1)
  const finalName = trailingSlash ? undefined : parts[parts.length - 1]

  let prefix = path.startsWith('/') ? '/' : '.'
  let dirFd: number
  try {
    dirFd = openSync(prefix, O_RDONLY | O_DIRECTORY)
  } catch (e) {
    return { refused: openError(e) }
  }
  const inDir = (name: string): string => (viaProcFd ? `/proc/self/fd/${dirFd}/${name}` : `${prefix}/${name}`)
  const isSymlinkIn = (name: string): boolean => {
    try {
      return lstatSync(inDir(name)).isSymbolicLink()
    } catch {
      return false
    }
  }
  try {
    for (const d of dirs) {
      let next: number
      try {
        next = openSync(inDir(d), O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
      } catch (e) {
        // Linux answers O_DIRECTORY|O_NOFOLLOW on a symlink with ENOTDIR; ask the name itself which it was.
        if ((e as NodeJS.ErrnoException).code === 'ENOTDIR' && isSymlinkIn(d)) return { refused: 'path_symlink' }
        return { refused: openError(e) }
      }
      closeSync(dirFd)
      dirFd = next
      prefix = `${prefix}/${d}`
    }
    if (finalName === undefined) return { refused: 'path_not_regular_file' }
    try {
      return { fd: openSync(inDir(finalName), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY) }
    } catch (e) {
      return { refused: openError(e) }
    }
  } finally {
    closeSync(dirFd)
  }
}
