// Text copies of tool results. A result with observations prints one [date, value] pair per line (the README layout);
// everything else is standard 2-space JSON.

/** Renders a tool result as the text content that accompanies its structuredContent. */
export function renderJson(value: Record<string, unknown>): string {
  const observations = value.observations
  if (!Array.isArray(observations)) return JSON.stringify(value, null, 2)
  const lines: string[] = []
  if (observations.length === 0) lines.push('  "observations": []')
  else {
    const pairs = observations.map((o) => {
      const [date, rate] = o as [string, number]
      return `    [${JSON.stringify(date)}, ${JSON.stringify(rate)}]`
    })
    lines.push(`  "observations": [\n${pairs.join(',\n')}\n  ]`)
  }
  for (const [key, v] of Object.entries(value)) {
    if (key === 'observations') continue
    lines.push(`  ${JSON.stringify(key)}: ${JSON.stringify(v, null, 2).replace(/\n/g, '\n  ')}`)
  }
  return `{\n${lines.join(',\n')}\n}`
}
