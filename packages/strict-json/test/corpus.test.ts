import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { parseStrict, StrictJsonError } from '@tollgate/strict-json'

interface CorpusCase {
  file: string
  expect: string
  offset?: number
  maxBytes?: number
  maxDepth?: number
}

const dir = new URL('./corpus/', import.meta.url)
const manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as { cases: CorpusCase[] }

test('the corpus manifest lists cases for every error family', () => {
  const codes = new Set(manifest.cases.map((c) => c.expect))
  for (const code of [
    'ok',
    'ERR_STRICT_JSON_BOM',
    'ERR_STRICT_JSON_INVALID_UTF8',
    'ERR_STRICT_JSON_TOO_LARGE',
    'ERR_STRICT_JSON_TOO_DEEP',
    'ERR_STRICT_JSON_DUPLICATE_KEY',
    'ERR_STRICT_JSON_SYNTAX',
    'ERR_STRICT_JSON_NON_FINITE',
    'ERR_STRICT_JSON_NUMBER_OVERFLOW',
    'ERR_STRICT_JSON_LONE_SURROGATE',
    'ERR_STRICT_JSON_TRAILING_CONTENT',
  ]) {
    assert.ok(codes.has(code), code)
  }
})

for (const c of manifest.cases) {
  test(`corpus ${c.file}: ${c.expect}`, () => {
    const bytes = readFileSync(new URL(c.file, dir))
    const options = { maxBytes: c.maxBytes ?? 65536, maxDepth: c.maxDepth ?? 64 }
    if (c.expect === 'ok') {
      assert.doesNotThrow(() => parseStrict(bytes, options))
      return
    }
    assert.throws(
      () => parseStrict(bytes, options),
      (e: unknown) => {
        assert.ok(e instanceof StrictJsonError)
        assert.equal(e.code, c.expect)
        if (c.offset !== undefined) assert.equal(e.offset, c.offset, 'offset')
        return true
      },
    )
  })
}
