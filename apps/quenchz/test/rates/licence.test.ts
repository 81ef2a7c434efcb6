// The ESCB reuse conditions (digest §12) over the shared data: source quoted, data unmodified by hash, only EXR.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { readHistory } from '../../src/rates/sources/history.js'
import { CASSETTES, HISTORY_ZIP, NO_CASSETTES, NO_HISTORY, QUENCHZ_DIR } from './support/shared.js'

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex')

describe('recordings reuse conditions', { skip: NO_CASSETTES }, () => {
  const dir = CASSETTES as string
  const index = () =>
    JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as Array<{
      name: string
      url: string
      bytes: number
      sha256: string
      source: string
    }>

  test('the source is quoted in the data README and in the index entries', () => {
    assert.ok(readFileSync(join(dir, 'README.md'), 'utf8').includes('Source: ECB statistics.'))
    assert.ok(index().some((e) => e.source === 'Source: ECB statistics.'))
  })

  test('every present body has its recorded length and SHA-256; absent ones are absent, not modified', () => {
    let present = 0
    for (const e of index()) {
      const path = join(dir, `${e.name}.body`)
      if (!existsSync(path)) continue
      present++
      const body = readFileSync(path)
      assert.equal(body.length, e.bytes, e.name)
      assert.equal(sha256(body), e.sha256, e.name)
    }
    assert.equal(present, 5)
  })

  test('no body on disk lacks an index entry', () => {
    const names = new Set(index().map((e) => e.name))
    const bodies = readdirSync(dir).filter((f) => f.endsWith('.body'))
    assert.deepEqual(
      bodies.filter((f) => !names.has(f.slice(0, -'.body'.length))),
      [],
    )
  })

  test('every recorded URL is the ECB’s own EXR compilation', () => {
    for (const e of index()) assert.ok(e.url.startsWith('https://data-api.ecb.europa.eu/service/data/EXR/'), e.url)
  })
})

describe('history file reuse conditions', { skip: NO_HISTORY }, () => {
  test('the zip is byte-for-byte what the data README recorded', () => {
    assert.equal(
      sha256(readFileSync(HISTORY_ZIP as string)),
      'f866ef61b04a7f08b741f6ec731b71e2e777cbbc694943d09b8409aee46743b3',
    )
  })
  test('the history holds only ECB euro reference rates: 41 currency columns quoted against the euro', async () => {
    const history = await readHistory(HISTORY_ZIP as string)
    assert.equal(history.columns.size, 41)
    assert.equal(history.columns.has('EUR'), false)
  })
})

describe('this workspace carries no copy of the data', () => {
  test('no .body, eurofxref file or index.json copy under apps/quenchz', () => {
    const found: string[] = []
    const walk = (d: string) => {
      for (const entry of readdirSync(d, { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name === 'dist') continue
        const p = join(d, entry.name)
        if (entry.isDirectory()) walk(p)
        else if (/\.body$|eurofxref|^index\.json$/.test(entry.name)) found.push(p)
      }
    }
    walk(QUENCHZ_DIR)
    assert.deepEqual(found, [])
  })

  test('the code names only the ECB EXR data API as its upstream', () => {
    const live = readFileSync(join(QUENCHZ_DIR, 'src/rates/sources/live.ts'), 'utf8')
    const paths = live.match(/\/service\/data\/[A-Z]+\//g) ?? []
    assert.ok(paths.length > 0)
    assert.deepEqual([...new Set(paths)], ['/service/data/EXR/'])
    const urls = live.match(/https:\/\/data-api[^'"`\s]*/g) ?? []
    assert.deepEqual([...new Set(urls)], ['https://data-api.ecb.europa.eu/service/data/EXR'])
  })
})
