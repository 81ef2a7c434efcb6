// A command whose reader goes away (`… | head -1`) exits quietly: no stack trace, the SIGPIPE status a shell shows.
// A real child process writes into a real pipe whose reading end this test closes after the first bytes.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { BROKEN_PIPE_EXIT, isBrokenPipe } from '../src/index.js'

const WRITER = fileURLToPath(new URL('./fixtures/endless-writer.ts', import.meta.url))

/** Runs the writer, reads its first chunk, then closes the reading end; resolves with how the writer ended. */
function readFirstChunkThenClose(mode: 'guarded' | 'bare'): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, mode], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    child.stdout.once('data', () => child.stdout.destroy())
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, stderr }))
  })
}

test('a guarded command exits quietly with 141 when its reader closes the pipe', async () => {
  const { code, stderr } = await readFirstChunkThenClose('guarded')
  assert.equal(stderr, '')
  assert.equal(code, BROKEN_PIPE_EXIT)
  assert.equal(BROKEN_PIPE_EXIT, 141)
})

test('without the guard the same pipe ends in the uncaught EPIPE stack trace (what the guard prevents)', async () => {
  const { code, stderr } = await readFirstChunkThenClose('bare')
  assert.match(stderr, /EPIPE/)
  assert.equal(code, 1)
})

test('isBrokenPipe recognises EPIPE only', () => {
  assert.equal(isBrokenPipe(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })), true)
  assert.equal(isBrokenPipe(Object.assign(new Error('write ECONNRESET'), { code: 'ECONNRESET' })), false)
  assert.equal(isBrokenPipe(undefined), false)
})
