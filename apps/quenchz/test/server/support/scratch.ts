// A suite's scratch directory, with an empty recordings directory in it: a source that opens anywhere, so a CLI
// serving it needs none of the shared data. The suite removes the directory itself (after its processes are gone).
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A new directory under the system temp directory, named from `prefix`, and `empty-recordings` inside it. */
export function scratchWithEmptyRecordings(prefix: string): { scratch: string; empty: string } {
  const scratch = mkdtempSync(join(tmpdir(), prefix))
  const empty = join(scratch, 'empty-recordings')
  mkdirSync(empty, { recursive: true })
  writeFileSync(join(empty, 'index.json'), '[]')
  return { scratch, empty }
}
