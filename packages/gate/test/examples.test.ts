// The README's quick start is a real file; this runs it.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { quickStart } from '../examples/quick-start.ts'

test('the quick start serves its tool on 2026-07-28 and conceals a name it does not have', async () => {
  const lines: string[] = []
  await quickStart((l) => lines.push(l))
  assert.deepEqual(lines, [
    'era: modern',
    'tools: clock.now',
    'clock.now served: true',
    'clock.set: no tool by that name is available to this caller',
  ])
})
