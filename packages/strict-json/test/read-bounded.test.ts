import assert from 'node:assert/strict'
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { readFdBounded, readStreamBounded } from '@tollgate/strict-json'

test('readFdBounded reads exactly the limit and refuses one byte more', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'strict-json-fd-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const limit = 1 << 20
  writeFileSync(join(dir, 'at'), Buffer.alloc(limit, 0x20))
  writeFileSync(join(dir, 'over'), Buffer.alloc(limit + 1, 0x20))
  writeFileSync(join(dir, 'empty'), '')
  const fd1 = openSync(join(dir, 'at'), 'r')
  try {
    assert.equal(readFdBounded(fd1, limit).length, limit)
  } finally {
    closeSync(fd1)
  }
  const fd2 = openSync(join(dir, 'over'), 'r')
  try {
    assert.throws(() => readFdBounded(fd2, limit), { code: 'ERR_STRICT_JSON_TOO_LARGE' })
  } finally {
    closeSync(fd2)
  }
  const fd3 = openSync(join(dir, 'empty'), 'r')
  try {
    assert.equal(readFdBounded(fd3, limit).length, 0)
  } finally {
    closeSync(fd3)
  }
})

test('readStreamBounded stops pulling once the limit is passed', async () => {
  let pulled = 0
  async function* source() {
    for (let i = 0; i < 100; i++) {
      pulled++
      yield new Uint8Array(10)
    }
  }
  await assert.rejects(readStreamBounded(source(), 25), { code: 'ERR_STRICT_JSON_TOO_LARGE' })
  assert.equal(pulled, 3)
  const ok = await readStreamBounded(
    (async function* () {
      yield Buffer.from('ab')
      yield Buffer.from('cd')
    })(),
    4,
  )
  assert.equal(ok.toString(), 'abcd')
})

test('bounded readers refuse nonsense limits', async () => {
  assert.throws(() => readFdBounded(0, -1), RangeError)
  await assert.rejects(readStreamBounded((async function* () {})(), Number.NaN), RangeError)
})
