// The ECB's eurofxref-hist file (zip or csv): one row per TARGET business day, newest first, one column per currency,
// `N/A` where a currency had no rate. Read once into per-currency sorted arrays.
import { readFile } from 'node:fs/promises'
import yauzl from 'yauzl'
import type { Observation, UpstreamOutcome } from '../classify.js'
import { parseCsv } from '../csv.js'
import { parseIsoDay } from '../days.js'
import { isEndedCurrency } from '../ended-currencies.js'
import { HistoryFormat } from '../errors.js'
import { pyRepr } from '../py-repr.js'
import { type RatesSource, type SeriesExtent, type SourceRefusal, seriesKey, type WindowRequest } from './source.js'

const DECIMAL = /^\d+(\.\d+)?$/

/** One currency's column: ascending days with the vendor's decimal text. */
export interface HistoryColumn {
  days: number[]
  lexemes: string[]
  /** The same days and values pre-built, so a wide window costs one copy, not a parse per row. */
  observations: Observation[]
}

/** The parsed file: every currency's column and the newest date of the whole file. */
export interface History {
  columns: Map<string, HistoryColumn>
  lastDay: number
  rows: number
}

/** Extracts the single .csv entry of a zip held in memory. */
export function unzipCsv(zip: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, file) => {
      if (err || !file) return reject(new HistoryFormat('not a readable zip'))
      let found = false
      file.on('error', () => reject(new HistoryFormat('not a readable zip')))
      file.on('end', () => {
        if (!found) reject(new HistoryFormat('the zip holds no .csv file'))
      })
      file.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('.csv')) return file.readEntry()
        found = true
        file.openReadStream(entry, (streamErr, stream) => {
          if (streamErr || !stream) return reject(new HistoryFormat('the csv entry cannot be read'))
          const chunks: Buffer[] = []
          stream.on('data', (c: Buffer) => chunks.push(c))
          stream.on('error', () => reject(new HistoryFormat('the csv entry cannot be read')))
          stream.on('end', () => {
            file.close()
            resolve(Buffer.concat(chunks))
          })
        })
      })
      file.readEntry()
    })
  })
}

/** Parses eurofxref-hist.csv text. Throws HistoryFormat on anything else. */
export function parseHistory(text: string): History {
  const rows = parseCsv(text)
  const header = rows[0]
  if (header?.[0] !== 'Date') throw new HistoryFormat('the first column is not Date')
  const currencies = header
    .slice(1)
    .map((c, i) => ({ code: c.trim(), at: i + 1 }))
    .filter((c) => c.code !== '')
  const columns = new Map<string, HistoryColumn>()
  for (const c of currencies) {
    if (!/^[A-Z]{3}$/.test(c.code)) throw new HistoryFormat('a column is not a currency code')
    columns.set(c.code, { days: [], lexemes: [], observations: [] })
  }
  let lastDay = Number.NEGATIVE_INFINITY
  const dated: { day: number; row: string[] }[] = []
  for (let r = 1; r < rows.length; r++) {
    const row = rows[r] as string[]
    const day = parseIsoDay(row[0])
    if (day === null) throw new HistoryFormat(`row ${r + 1} has no date`)
    dated.push({ day, row })
    if (day > lastDay) lastDay = day
  }
  // The file is newest first; the columns are kept oldest first for binary search.
  dated.sort((a, b) => a.day - b.day)
  for (const { day, row } of dated) {
    for (const c of currencies) {
      const value = (row[c.at] ?? '').trim()
      if (value === 'N/A' || value === '') continue
      if (!DECIMAL.test(value)) throw new HistoryFormat(`a ${c.code} value is not a decimal`)
      const column = columns.get(c.code) as HistoryColumn
      column.days.push(day)
      column.lexemes.push(value)
      column.observations.push({ day, date: row[0] as string, lexeme: value, value: Number(value) })
    }
  }
  return { columns, lastDay, rows: dated.length }
}

/** Reads a .zip (by its magic bytes) or a .csv file. */
export async function readHistory(file: string): Promise<History> {
  const bytes = await readFile(file)
  const isZip = bytes.length >= 4 && bytes.readUInt32LE(0) === 0x04034b50
  const csv = isZip ? await unzipCsv(bytes) : bytes
  return parseHistory(csv.toString('utf8'))
}

function lowerBound(days: number[], target: number): number {
  let lo = 0
  let hi = days.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((days[mid] as number) < target) lo = mid + 1
    else hi = mid
  }
  return lo
}

export class HistorySource implements RatesSource {
  readonly kind = 'history' as const
  readonly history: History

  private constructor(history: History) {
    this.history = history
  }

  static async open(file: string): Promise<HistorySource> {
    return new HistorySource(await readHistory(file))
  }

  static fromText(text: string): HistorySource {
    return new HistorySource(parseHistory(text))
  }

  async window(request: WindowRequest, _now?: Date): Promise<UpstreamOutcome | SourceRefusal> {
    if (request.recording !== undefined) {
      return { kind: 'source_refusal', text: `no recording named ${pyRepr(request.recording)}` }
    }
    const column = this.history.columns.get(request.currency)
    if (!column) {
      return {
        kind: 'unknown_series',
        detail: `${seriesKey(request.currency)} is not among the ${this.history.columns.size} series of the history file`,
      }
    }
    const observations = column.observations.slice(
      lowerBound(column.days, request.from),
      lowerBound(column.days, request.to + 1),
    )
    if (observations.length === 0) return { kind: 'empty_window', detail: 'no observation falls inside the window' }
    return { kind: 'observations', observations, placeholders: [], detail: `${observations.length} observations` }
  }

  async catalogue(): Promise<string[]> {
    return [...this.history.columns.keys()].map(seriesKey).sort()
  }

  /**
   * A column has ended when its currency was replaced or abolished (the documented table) and its last rate is
   * older than the file's newest row. A column that merely stopped (RUB) has not: its later days are gaps.
   */
  async extent(currency: string): Promise<SeriesExtent | null> {
    const column = this.history.columns.get(currency)
    const first = column?.days[0]
    const last = column?.days[column.days.length - 1]
    if (first === undefined || last === undefined) return null
    const ended = isEndedCurrency(currency) && last < this.history.lastDay
    return { first, last, ended, coveredUntil: this.history.lastDay }
  }

  async close(): Promise<void> {}
}
