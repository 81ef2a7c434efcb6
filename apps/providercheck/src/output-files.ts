// Output paths are checked before any request: a run that changes data (a refund, a cancel) must not end with
// its verdict lost because the report could not be written.
import { accessSync, constants, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/** undefined when `path` can be written as a file, else a usage message naming the flag and why. */
export function outputPathProblem(flag: string, path: string): string | undefined {
  const existing = statOrUndefined(path)
  if (existing !== undefined) {
    if (existing.isDirectory()) return `${flag} ${path} is a folder, not a file`
    if (!writable(path, constants.W_OK)) return `${flag} ${path} cannot be written (permission denied)`
    return undefined
  }
  const folder = dirname(resolve(path))
  const parent = statOrUndefined(folder)
  if (parent === undefined) return `${flag} ${path}: the folder ${folder} does not exist`
  if (!parent.isDirectory()) return `${flag} ${path}: ${folder} is not a folder`
  if (!writable(folder, constants.W_OK | constants.X_OK)) return `${flag} ${path}: the folder ${folder} is not writable`
  return undefined
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

function writable(path: string, mode: number): boolean {
  try {
    accessSync(path, mode)
    return true
  } catch {
    return false
  }
}
