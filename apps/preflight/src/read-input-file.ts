import { closeSync, fstatSync } from 'node:fs'
import { readFdBounded, StrictJsonError } from '@tollgate/strict-json'
import { check, MAX_INPUT_BYTES, parseFailureResult } from './check.js'
import { resultFor } from './diagnostics.js'
import { openNoFollow, PROC_FD_AVAILABLE } from './internal/open-no-follow.js'
import type { PreflightResult } from './outcomes.js'

/** Bytes of the input file, or the refusal that stopped reading it. */
export type InputFile = { ok: true; bytes: Buffer } | { ok: false; result: PreflightResult }

/**
 * Reads the input file the paranoid way: every component of the path as given is opened without following
 * symlinks (a symlink anywhere is refused), the file is opened O_NOFOLLOW|O_NONBLOCK (a FIFO never blocks),
 * fstat on the open descriptor must say "regular file", and at most 1 MiB + 1 byte is read (the extra byte means
 * input_too_large). Never throws for file-system conditions.
 */
export function readInputFile(path: string): InputFile {
  if (typeof path !== 'string') return { ok: false, result: resultFor('argument_empty_path') }
  const opened = openNoFollow(path, PROC_FD_AVAILABLE)
  if ('refused' in opened) return { ok: false, result: resultFor(opened.refused) }
  const fd = opened.fd
  try {
    // Checked on the descriptor itself, not on the name, so the answer is about what we actually read.
    if (!fstatSync(fd).isFile()) return { ok: false, result: resultFor('path_not_regular_file') }
    try {
      return { ok: true, bytes: readFdBounded(fd, MAX_INPUT_BYTES) }
    } catch (e) {
      if (e instanceof StrictJsonError) return { ok: false, result: parseFailureResult(e) }
      return { ok: false, result: resultFor('input_read_failed') }
    }
  } finally {
    closeSync(fd)
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
