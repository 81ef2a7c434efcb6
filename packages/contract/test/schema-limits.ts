// Counts what the platform's profile check limits (seed 002, "Araç Şemalarını Yayımlama"): bytes, levels, nodes
// and $refs of one schema document. Written here, not imported from src: the test must not trust the code it checks.

export interface SchemaSize {
  bytes: number
  /** Nesting of objects and arrays; the root object is level 1. */
  depth: number
  /** Every JSON value (object, array, string, number, boolean, null), the root included; keys are not nodes. */
  nodes: number
  /** Number of "$ref" keys anywhere in the document. */
  refs: number
}

export function measureSchema(doc: unknown): SchemaSize {
  let nodes = 0
  let refs = 0
  const walk = (value: unknown, level: number): number => {
    nodes++
    if (value === null || typeof value !== 'object') return level - 1
    let deepest = level
    const children = Array.isArray(value)
      ? value
      : Object.entries(value).map(([key, child]) => {
          if (key === '$ref') refs++
          return child
        })
    for (const child of children) deepest = Math.max(deepest, walk(child, level + 1))
    return deepest
  }
  const depth = walk(doc, 1)
  return { bytes: Buffer.byteLength(JSON.stringify(doc)), depth, nodes, refs }
}

/** The seed's limits per schema, and for all schemas together. */
export const LIMITS = { bytes: 64 * 1024, depth: 32, nodes: 4096, refs: 8, totalNodes: 20_000 } as const
