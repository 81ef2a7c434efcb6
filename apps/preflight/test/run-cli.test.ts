import assert from 'node:assert/strict'
import { test } from 'node:test'
import { formatResult, runCli } from '@tollgate/preflight'

test('a checker that throws becomes internal_error with none of the thrown text', () => {
  const r = runCli(['x.json'], () => {
    throw new Error('SECRET detail at /home/user/orders.json')
  })
  assert.deepEqual(r, { diagnostic: 'internal_error', exit_code: 2, outcome: 'internal_error', version: '0.1.0' })
  assert.ok(!formatResult(r).includes('SECRET'))
})

test('the path reaches the checker unchanged, ./-name included', () => {
  const seen: string[] = []
  const spy = (p: string) => {
    seen.push(p)
    return runCli(['--help'])
  }
  runCli(['./-x.json'], spy)
  runCli(['a b.json'], spy)
  assert.deepEqual(seen, ['./-x.json', 'a b.json'])
})
