// The shared CLI conventions, unit by unit; each command's own test pins them on the real process.
import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { test } from 'node:test'
import { parseArgs } from 'node:util'
import { listenProblem, parseArgsProblem, parsePort, usageError, versionLine } from '../src/index.js'

const parseError = (args: string[]): unknown => {
  try {
    parseArgs({ args, options: { port: { type: 'string' }, help: { type: 'boolean' } }, strict: true })
  } catch (error) {
    return error
  }
  throw new Error('parseArgs accepted the arguments')
}

test('a usage error is the problem on one line, then where the help is', () => {
  assert.equal(usageError('tool', 'unknown flag --x'), 'tool: unknown flag --x\nsee tool --help\n')
  assert.equal(versionLine('tool', '1.2.3'), 'tool 1.2.3\n')
})

test("parseArgs' errors name the flag and never the value", () => {
  assert.equal(parseArgsProblem(parseError(['--nope'])), 'unknown flag --nope')
  assert.equal(parseArgsProblem(parseError(['--token=s3cr3t-value'])), 'unknown flag --token')
  assert.equal(parseArgsProblem(parseError(['--port'])), '--port needs a value')
  assert.equal(parseArgsProblem(parseError(['--help=yes'])), '--help takes no value')
  const positional = parseArgsProblem(parseError(['s3cr3t-value']))
  assert.equal(positional, 'unexpected argument: this command takes flags only')
  assert.doesNotMatch(positional, /s3cr3t/)
})

test('a port is a whole number from 0 to 65535', () => {
  assert.equal(parsePort('0'), 0)
  assert.equal(parsePort('65535'), 65535)
  for (const bad of ['65536', '-1', '80.5', '', 'http', '1e3', ' 80']) {
    assert.deepEqual(parsePort(bad), {
      problem: '--port must be a whole number from 0 to 65535 (0 picks a free port)',
    })
  }
})

test('a real EADDRINUSE becomes a sentence naming --port', async () => {
  const first = createServer()
  await new Promise<void>((resolve) => first.listen(0, '127.0.0.1', resolve))
  const port = (first.address() as { port: number }).port
  const second = createServer()
  const error = await new Promise<unknown>((resolve) => {
    second.once('error', resolve)
    second.listen(port, '127.0.0.1')
  })
  await new Promise<void>((resolve) => first.close(() => resolve()))
  assert.equal(
    listenProblem(error, { host: '127.0.0.1', port }),
    `port ${port} on 127.0.0.1 is already in use; pass another with --port N (--port 0 picks a free one)`,
  )
  assert.equal(listenProblem(new Error('other'), { host: '127.0.0.1', port }), undefined)
})
