import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { openNoFollow, PROC_FD_AVAILABLE } from '../../src/internal/open-no-follow.js'

// Absolute paths through realpath, so that a symlinked temp dir (macOS /var) does not trip the checks.
let root: string
before(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'preflight-open-')))
  mkdirSync(join(root, 'd', 'e'), { recursive: true })
  writeFileSync(join(root, 'd', 'e', 'f.json'), '{}')
  symlinkSync(join(root, 'd'), join(root, 'dlink'))
  symlinkSync(join(root, 'd', 'e', 'f.json'), join(root, 'd', 'flink.json'))
  try {
    execFileSync('mkfifo', [join(root, 'fifo')])
  } catch {
    // FIFO case skipped below when mkfifo is missing.
  }
})
after(() => rmSync(root, { recursive: true, force: true }))

const outcome = (path: string, viaProcFd: boolean): string => {
  const r = openNoFollow(path, viaProcFd)
  if ('refused' in r) return r.refused
  const kind = fstatSync(r.fd).isFile() ? 'file' : 'other'
  closeSync(r.fd)
  return kind
}

// Both walks must agree; the /proc one only exists on Linux.
for (const viaProcFd of PROC_FD_AVAILABLE ? [true, false] : [false]) {
  describe(viaProcFd ? 'walk through /proc/self/fd' : 'walk by prefix names', () => {
    test('opens a regular file through real directories, absolute or with . and ..', () => {
      assert.equal(outcome(join(root, 'd', 'e', 'f.json'), viaProcFd), 'file')
      assert.equal(outcome(`${root}/d/./e/../e//f.json`, viaProcFd), 'file')
    })
    test('refuses a symlink as the file or as any directory', () => {
      assert.equal(outcome(join(root, 'd', 'flink.json'), viaProcFd), 'path_symlink')
      assert.equal(outcome(join(root, 'dlink', 'e', 'f.json'), viaProcFd), 'path_symlink')
      assert.equal(outcome(`${root}/dlink/../d/e/f.json`, viaProcFd), 'path_symlink')
    })
    test('reports missing names, files used as directories and trailing slashes', () => {
      assert.equal(outcome(join(root, 'nope.json'), viaProcFd), 'path_not_found')
      assert.equal(outcome(join(root, 'nope', 'f.json'), viaProcFd), 'path_not_found')
      assert.equal(outcome(join(root, 'd', 'e', 'f.json', 'x'), viaProcFd), 'path_component_not_directory')
      assert.equal(outcome(`${root}/d/`, viaProcFd), 'path_not_regular_file')
      assert.equal(outcome('', viaProcFd), 'argument_empty_path')
      assert.equal(outcome('a\0b', viaProcFd), 'path_open_failed')
    })
    test('opens a directory or FIFO without blocking (the caller refuses it after fstat)', (t) => {
      assert.equal(outcome(join(root, 'd'), viaProcFd), 'other')
      try {
        lstatSync(join(root, 'fifo'))
      } catch {
        t.skip('mkfifo is not available')
        return
      }
      assert.equal(outcome(join(root, 'fifo'), viaProcFd), 'other')
    })
  })
}
