import { readFileSync } from 'node:fs'

/** The kit's name, written into every report. */
export const KIT_NAME = 'providercheck'
/**
 * The version of this package's package.json: the one source (`--version`, the first line, every report). Read at
 * start-up from beside src/ or dist/, so a release bumps one file.
 */
export const KIT_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version
