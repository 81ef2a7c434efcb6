// A temporary folder a command creates for itself, removed when the process ends: normally, by process.exit, or by
// SIGINT/SIGTERM/SIGHUP (the command's own signal handlers still run; this only adds the removal).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
const EXIT_CODES: Record<(typeof SIGNALS)[number], number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 }

export interface OwnedTempDir {
  path: string
  /** Removes the folder now and forgets the exit hooks (idempotent). */
  remove(): void
}

/**
 * Creates `<os tmp>/<prefix>XXXXXX` and removes it on exit. When the command has no handler of its own for a
 * signal, the signal ends the process with the conventional code (128 + signal number) after the removal.
 */
export function ownedTempDir(prefix: string): OwnedTempDir {
  const path = mkdtempSync(join(tmpdir(), prefix))
  let removed = false
  const remove = () => {
    if (removed) return
    removed = true
    rmSync(path, { recursive: true, force: true })
    process.off('exit', remove)
    for (const signal of SIGNALS) process.off(signal, onSignal[signal])
  }
  const onSignal = Object.fromEntries(
    SIGNALS.map((signal) => [
      signal,
      () => {
        // Another listener (the command's graceful stop) decides when to exit; the 'exit' hook removes the folder.
        if (process.listenerCount(signal) > 0) return
        remove()
        process.exit(EXIT_CODES[signal])
      },
    ]),
  ) as Record<(typeof SIGNALS)[number], () => void>
  process.once('exit', remove)
  for (const signal of SIGNALS) process.once(signal, onSignal[signal])
  return { path, remove }
}
