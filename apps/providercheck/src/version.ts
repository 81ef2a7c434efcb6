import { readFileSync } from 'node:fs'

/** The kit's name, written into every report. */
export const KIT_NAME = 'providercheck'

/**
 * The version of this package's package.json: the one source (`--version`, the first line, every report). Read at
 * start-up from src/ or dist/ (one folder down) or from the installed bundle (bundle/bin/, two folders down).
 */
export const KIT_VERSION: string = packageVersion()

function packageVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as {
        name?: unknown
        version?: unknown
      }
      if (pkg.name === '@tollgate/providercheck' && typeof pkg.version === 'string') return pkg.version
    } catch {
      // not this folder: try the next one up
    }
  }
  throw new Error('providercheck: its package.json was not found beside the code')
}
