// Locates ../shared (or $TOLLGATE_SHARED) for tests that need the recorded ECB data.
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repoRoot = resolve(fileURLToPath(new URL('../../../../../', import.meta.url)))

export const REPO_ROOT = repoRoot
export const SHARED = process.env.TOLLGATE_SHARED ?? resolve(repoRoot, '..', 'shared')
export const HISTORY_ZIP = resolve(SHARED, 'data', 'ecb', 'eurofxref-hist.zip')
export const CASSETTES = resolve(SHARED, 'data', 'quenchz-cassettes')
/** Why the data-dependent tests skip, or undefined when the history file is there. */
export const NO_HISTORY = existsSync(HISTORY_ZIP) ? undefined : `the ECB history file is absent (${HISTORY_ZIP})`
export const NO_CASSETTES = existsSync(resolve(CASSETTES, 'index.json'))
  ? undefined
  : `the recordings are absent (${CASSETTES})`
