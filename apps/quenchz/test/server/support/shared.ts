// Locates ../shared (or $TOLLGATE_SHARED) for tests that need the recorded ECB data (@tollgate/test-support: skip
// with the reason when absent, fail under TOLLGATE_REQUIRE_SERVICES=1).
import { dirname } from 'node:path'
import { findSharedData, REPO_ROOT, sharedDir } from '@tollgate/test-support'

export { REPO_ROOT }
export const SHARED = sharedDir()
const history = findSharedData('data/ecb/eurofxref-hist.zip')
const cassettes = findSharedData('data/quenchz-cassettes/index.json')
export const HISTORY_ZIP = history.path
export const CASSETTES = dirname(cassettes.path)
/** Why the data-dependent tests skip, or undefined when the history file is there. */
export const NO_HISTORY = history.skip || undefined
export const NO_CASSETTES = cassettes.skip || undefined
