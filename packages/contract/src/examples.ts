import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ExamplesUnreadableError } from './errors.js'

/** One example document shipped in examples/: valid ones under v1/, ones that must be rejected under invalid/. */
export interface ContractExample {
  /** The schema it is checked against, relative to CONTRACT_BASE: 'refund-result.json' or 'tool-inputs.json#/$defs/refund'. */
  schema: string
  /** The case name (file name without .json). */
  name: string
  valid: boolean
  /** Absolute file path. */
  path: string
  /** The exact bytes of the file (read them with a strict reader to keep lexemes such as 2000.0 visible). */
  bytes: Buffer
}

const examplesDir = new URL('../examples/', import.meta.url)

function jsonFiles(dir: URL): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
}

function subdirs(dir: URL): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort()
}

function collect(kind: 'v1' | 'invalid'): ContractExample[] {
  const root = new URL(`${kind}/`, examplesDir)
  const out: ContractExample[] = []
  const add = (schema: string, dir: URL) => {
    for (const file of jsonFiles(dir)) {
      const url = new URL(file, dir)
      out.push({
        schema,
        name: file.slice(0, -'.json'.length),
        valid: kind === 'v1',
        path: fileURLToPath(url),
        bytes: readFileSync(url),
      })
    }
  }
  for (const base of subdirs(root)) {
    const dir = new URL(`${base}/`, root)
    // tool-inputs.json is only used by fragment: examples/<kind>/tool-inputs/<def>/<case>.json
    if (base === 'tool-inputs') {
      for (const def of subdirs(dir)) add(`tool-inputs.json#/$defs/${def}`, new URL(`${def}/`, dir))
    } else {
      add(`${base}.json`, dir)
    }
  }
  return out
}

/**
 * Every example shipped with the package (valid first, then invalid; each sorted by schema and name), read
 * from disk on each call. Throws ExamplesUnreadableError (ERR_CONTRACT_EXAMPLES_UNREADABLE) if examples/ is missing.
 */
export function listExamples(): ContractExample[] {
  try {
    return [...collect('v1'), ...collect('invalid')]
  } catch (cause) {
    throw new ExamplesUnreadableError({ cause })
  }
}
