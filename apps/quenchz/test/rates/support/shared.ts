// Locates ../shared (the seeds' recorded data) and builds small recordings directories in temp dirs.
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findSharedData } from '@tollgate/test-support'

const here = dirname(fileURLToPath(import.meta.url))
/** The repository root (apps/quenchz/test/rates/support → up five). */
export const REPO_ROOT = process.env.TOLLGATE_REPO_ROOT ?? resolve(here, '../../../../..')
/** The quenchz workspace directory. */
export const QUENCHZ_DIR = resolve(here, '../../..')

// The shared data through @tollgate/test-support: skip with the reason when absent, fail under
// TOLLGATE_REQUIRE_SERVICES=1.
const cassettes = findSharedData('data/quenchz-cassettes/index.json')
const history = findSharedData('data/ecb/eurofxref-hist.zip')
/** The recorded ECB responses, or null. */
export const CASSETTES = cassettes.skip === false ? dirname(cassettes.path) : null
/** The ECB eurofxref-hist.zip, or null. */
export const HISTORY_ZIP = history.skip === false ? history.path : null
/** Skip reasons, for `test(name, { skip }, fn)`. */
export const NO_CASSETTES = cassettes.skip
export const NO_HISTORY = history.skip

/** A fresh temp dir removed by the returned cleanup. */
export function tempDir(prefix = 'quenchz-rates-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

const TITLE = '"ECB reference exchange rate, US dollar/Euro, 2.15 pm (C.E.T.)"'
const HEADER =
  'KEY,FREQ,CURRENCY,CURRENCY_DENOM,EXR_TYPE,EXR_SUFFIX,TIME_PERIOD,OBS_VALUE,OBS_STATUS,OBS_CONF,OBS_PRE_BREAK,OBS_COM,TIME_FORMAT,BREAKS,COLLECTION,COMPILING_ORG,DISS_ORG,DOM_SER_IDS,PUBL_ECB,PUBL_MU,PUBL_PUBLIC,UNIT_INDEX_BASE,COMPILATION,COVERAGE,DECIMALS,NAT_TITLE,SOURCE_AGENCY,SOURCE_PUB,TITLE,TITLE_COMPL,UNIT,UNIT_MULT'

/** An SDMX csvdata body in the vendor's layout (CRLF, final CRLF); an empty value with status H is a placeholder. */
export function sdmxCsv(rows: Array<[string, string]>, currency = 'USD'): string {
  const lines = rows.map(
    ([date, value]) =>
      `EXR.D.${currency}.EUR.SP00.A,D,${currency},EUR,SP00,A,${date},${value},${value === '' ? 'H' : 'A'},F,,,P1D,,A,,,,,,,99Q1=100,,,4,,4F0,,US dollar/Euro ECB reference exchange rate,${TITLE},${currency},0`,
  )
  return `${[HEADER, ...lines].join('\r\n')}\r\n`
}

/** The Easter 2026 window's eight USD rates, as printed in the seed (2026-03-30 … 2026-04-10). */
export const EASTER_2026: Array<[string, string]> = [
  ['2026-03-30', '1.1484'],
  ['2026-03-31', '1.1498'],
  ['2026-04-01', '1.1605'],
  ['2026-04-02', '1.1525'],
  ['2026-04-07', '1.1557'],
  ['2026-04-08', '1.1706'],
  ['2026-04-09', '1.1685'],
  ['2026-04-10', '1.1711'],
]

export interface FixtureRecording {
  name: string
  url: string
  status: number
  contentType: string
  body: string | Buffer
}

/** Writes an index.json (digest format) and bodies for the given recordings into `dir`. */
export function writeRecordings(dir: string, recordings: FixtureRecording[]): void {
  const index = recordings.map((r) => {
    const body = typeof r.body === 'string' ? Buffer.from(r.body, 'utf8') : r.body
    writeFileSync(join(dir, `${r.name}.body`), body)
    return {
      bytes: body.length,
      captured_at: '2026-08-26T07:43:14+00:00',
      content_type: r.contentType,
      name: r.name,
      response_headers: { 'content-type': r.contentType },
      sha256: createHash('sha256').update(body).digest('hex'),
      source: 'Source: ECB statistics.',
      status: r.status,
      url: r.url,
    }
  })
  writeFileSync(join(dir, 'index.json'), JSON.stringify(index, null, 2))
}

export const ECB = 'https://data-api.ecb.europa.eu/service/data/EXR'

/** The fixed "long after" clock of the digest's tests. */
export const LONG_AFTER = new Date('2026-08-26T12:00:00Z')
