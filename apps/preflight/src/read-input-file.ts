import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync } from 'node:fs'
import { readFdBounded, StrictJsonError } from '@tollgate/strict-json'
import { check, MAX_INPUT_BYTES, parseFailureResult } from './check.js'
import { type Diagnostic, resultFor } from './diagnostics.js'
import type { PreflightResult } from './outcomes.js'

/** Bytes of the input file, or the refusal that stopped reading it. */
export type InputFile = { ok: true; bytes: Buffer } | { ok: false; result: PreflightResult }

// Linux exposes every open directory as /proc/self/fd/N: opening `/proc/self/fd/N/name` resolves `name` inside
// that very directory (like openat), so a parent swapped for a symlink after we checked it cannot redirect us.
const PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd')

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

const refuse = (diagnostic: Diagnostic): InputFile => ({ ok: false, result: resultFor(diagnostic) })

/**
 * Reads the input file the paranoid way: every component of the path as given is opened without following
 * symlinks (a symlink anywhere is refused), the file is opened O_NOFOLLOW|O_NONBLOCK (a FIFO never blocks),
 * fstat on the open descriptor must say "regular file", and at most 1 MiB + 1 byte is read.
 */
export function readInputFile(path: string): InputFile {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants
  if (O_NOFOLLOW === undefined || O_NONBLOCK === undefined || O_DIRECTORY === undefined) {
    return refuse('platform_unsupported')
  }
  if (typeof path !== 'string' || path === '') return refuse('argument_empty_path')
  if (path.includes('\0')) return refuse('path_open_failed')
  const O_NOCTTY = constants.O_NOCTTY ?? 0

  const parts = path.split('/').filter((p) => p !== '')
  const trailingSlash = path.endsWith('/')
  const dirs = trailingSlash ? parts : parts.slice(0, -1)
  const finalName = trailingSlash ? undefined : parts[parts.length - 1]

  let dirFd: number
  let prefix = path.startsWith('/') ? '/' : '.'
  try {
    dirFd = openSync(prefix, O_RDONLY | O_DIRECTORY)
  } catch (e) {
    return refuse(openError(e))
  }
  const openIn = (name: string, flags: number): number =>
    openSync(PROC_FD ? `/proc/self/fd/${dirFd}/${name}` : `${prefix}/${name}`, flags)
  const isSymlinkIn = (name: string): boolean => {
    try {
      return lstatSync(PROC_FD ? `/proc/self/fd/${dirFd}/${name}` : `${prefix}/${name}`).isSymbolicLink()
    } catch {
      return false
    }
  }
  try {
    for (const d of dirs) {
      let next: number
      try {
        next = openIn(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)
      } catch (e) {
        // Linux answers O_DIRECTORY|O_NOFOLLOW on a symlink with ENOTDIR; ask the name itself which it was.
        if ((e as NodeJS.ErrnoException).code === 'ENOTDIR' && isSymlinkIn(d)) return refuse('path_symlink')
        return refuse(openError(e))
      }
      closeSync(dirFd)
      dirFd = next
      prefix = `${prefix}/${d}`
    }
    if (finalName === undefined) return refuse('path_not_regular_file')
    let fd: number
    try {
      fd = openIn(finalName, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
    } catch (e) {
      return refuse(openError(e))
    }
    try {
      // Checked on the descriptor itself, not on the name, so the answer is about what we actually read.
      if (!fstatSync(fd).isFile()) return refuse('path_not_regular_file')
      try {
        return { ok: true, bytes: readFdBounded(fd, MAX_INPUT_BYTES) }
      } catch (e) {
        if (e instanceof StrictJsonError) return { ok: false, result: parseFailureResult(e) }
        return refuse('input_read_failed')
      }
    } finally {
      closeSync(fd)
    }
  } finally {
    closeSync(dirFd)
  }
}

/** Reads the file at `path` (see readInputFile) and checks it; refusals come back as results, never throws. */
export function checkFile(path: string): PreflightResult {
  try {
    const input = readInputFile(path)
    return input.ok ? check(input.bytes) : input.result
  } catch {
    return resultFor('internal_error')
  }
}
