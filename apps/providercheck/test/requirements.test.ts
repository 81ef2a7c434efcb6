import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { CHECK_IDS, CHECKS, needsOf, REQUIREMENTS } from '../src/index.js'

test('every check id cites a seed section and one behaviour sentence', () => {
  assert.deepEqual(Object.keys(REQUIREMENTS).sort(), [...CHECK_IDS].sort())
  for (const id of CHECK_IDS) {
    const r = REQUIREMENTS[id]
    assert.ok(r.section.length > 0, id)
    assert.match(r.behaviour, /^[A-Za-z].*\.$/, `${id}: one sentence`)
    assert.equal(r.behaviour.split('. ').length, 1, `${id}: one sentence`)
  }
})

test('the checks run in the order of the ids and only after the checks they need', () => {
  assert.deepEqual(
    CHECKS.map((c) => c.id),
    [...CHECK_IDS],
  )
  CHECKS.forEach((check, i) => {
    for (const need of check.needs) assert.ok(CHECK_IDS.indexOf(need) < i, `${check.id} needs ${need} earlier`)
  })
})

test('data-changing checks need mcp_profile (directly or through the check they rest on)', () => {
  const needs = (id: string): string[] => {
    const c = CHECKS.find((x) => x.id === id)
    return c ? c.needs.flatMap((n) => [n, ...needs(n)]) : []
  }
  for (const id of [
    'refund',
    'refund_replay',
    'refund_conflict',
    'refund_exceeds',
    'get_operation',
    'cancel_at_period_end',
    'cancel_again',
    'signature_idempotency_key',
  ]) {
    assert.ok(needs(id).includes('mcp_profile'), id)
  }
})

test('over REST a need on mcp_profile becomes a need on describe, so data-changing checks still wait for it', () => {
  for (const check of CHECKS) {
    const rest = needsOf(check, 'rest')
    assert.ok(!rest.includes('mcp_profile'), check.id)
    if (check.needs.includes('mcp_profile')) assert.ok(rest.includes('describe'), check.id)
    assert.deepEqual(needsOf(check, 'mcp'), check.needs)
  }
})

test('the README cites every check id', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  for (const id of CHECK_IDS) assert.ok(readme.includes(`\`${id}\``), `README cites ${id}`)
})

test('a check that applies to one binding says so in its seed section', () => {
  const single = CHECKS.filter((c) => c.transports !== undefined)
  assert.deepEqual(single.map((c) => c.id).sort(), ['mcp_profile', 'signature_idempotency_key'])
  for (const check of single) {
    const only = `${String(check.transports?.[0]).toUpperCase()} only`
    assert.ok(REQUIREMENTS[check.id].section.includes(only), `${check.id}: section says ${only}`)
  }
})
