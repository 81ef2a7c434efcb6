// Why a --db path cannot hold the SQLite store, said before anything opens it (the store's own error says only that
// it could not open). The path itself is not repeated: the person just typed it.
import { accessSync, constants, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

function isWritable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK | constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** The problem with `file` as a SQLite store path, or undefined when it can be opened or created. */
export function dbPathProblem(file: string): string | undefined {
  if (file === '') return 'needs a file path'
  const path = resolve(file)
  const stat = statSync(path, { throwIfNoEntry: false })
  if (stat !== undefined) {
    if (stat.isDirectory()) return 'is a folder; give a file path inside it (e.g. DIR/fakemerchant.sqlite)'
    if (!stat.isFile()) return 'is not a regular file'
    if (!isWritable(path)) return 'is not readable and writable by this user'
    return undefined
  }
  const folder = statSync(dirname(path), { throwIfNoEntry: false })
  if (folder === undefined) return 'is in a folder that does not exist; create the folder first'
  if (!folder.isDirectory()) return 'is inside something that is not a folder'
  // SQLite also writes -wal and -shm files beside the database.
  if (!isWritable(dirname(path)))
    return 'is in a folder this user cannot write to (SQLite writes its journal beside it)'
  return undefined
}
