// Recorded ECB responses replayed from a directory holding index.json and <name>.body files.
// Each body's length then SHA-256 is verified on first use; verified bytes are cached so later replays never re-read.
import { createHash } from 'node:crypto'
import { access, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { classify, type UpstreamOutcome } from '../classify.js'
import { formatDay, parseIsoDay, withThousands } from '../days.js'
import { NoIndex, RecordingAbsent, RecordingCorrupted } from '../errors.js'
import { pyRepr } from '../py-repr.js'
import { type RatesSource, type SeriesExtent, type SourceRefusal, seriesKey, type WindowRequest } from './source.js'

/** One index.json entry (the fields this code reads). */
export interface RecordingEntry {
  name: string
  url: string
  status: number
  content_type: string
  bytes: number
  sha256: string
  response_headers: Record<string, string>
  source: string
}

/** What a recorded URL asked for, when it is a daily EXR series request. */
export interface RecordedQuery {
  currency: string
  format: string | null
  startPeriod: number | null
  endPeriod: number | null
}

const SERIES_PATH = /\/service\/data\/EXR\/D\.([A-Z]{3})\.EUR\.SP00\.A$/

/** Reads currency, format and period out of a recorded URL; null if the URL is not one daily EXR series. */
export function recordedQuery(url: string): RecordedQuery | null {
  const parsed = new URL(url)
  const m = SERIES_PATH.exec(parsed.pathname)
  if (!m) return null
  const start = parsed.searchParams.get('startPeriod')
  const end = parsed.searchParams.get('endPeriod')
  return {
    currency: m[1] as string,
    format: parsed.searchParams.get('format'),
    startPeriod: start === null ? null : parseIsoDay(start),
    endPeriod: end === null ? null : parseIsoDay(end),
  }
}

/** Reads and shape-checks index.json. Throws NoIndex when absent or unreadable. */
export async function readIndex(dir: string): Promise<RecordingEntry[]> {
  let raw: string
  try {
    raw = await readFile(join(dir, 'index.json'), 'utf8')
  } catch {
    throw new NoIndex(dir)
  }
  // index.json is a local file this project controls, not caller input.
  const parsed: unknown = JSON.parse(raw)
  if (!Array.isArray(parsed)) throw new NoIndex(dir)
  return parsed.map((e) => {
    const entry = e as RecordingEntry
    if (typeof entry.name !== 'string' || typeof entry.url !== 'string' || typeof entry.sha256 !== 'string') {
      throw new NoIndex(dir)
    }
    return entry
  })
}

/** Verifies one body against its entry: length first, then SHA-256. Throws RecordingCorrupted. */
export function verifyBody(entry: RecordingEntry, body: Uint8Array): void {
  if (body.length !== entry.bytes) {
    throw new RecordingCorrupted(
      `${entry.name}.body holds ${withThousands(body.length)} bytes and ${withThousands(entry.bytes)} were recorded. This is a local file, so the likely cause is an interrupted write or an unfinished sync rather than an edit`,
    )
  }
  const actual = createHash('sha256').update(body).digest('hex')
  if (actual !== entry.sha256) {
    throw new RecordingCorrupted(
      `${entry.name}.body is the right length and hashes to ${actual.slice(0, 16)}, where ${entry.sha256.slice(0, 16)} was recorded. The bytes have been changed`,
    )
  }
}

export class RecordingsSource implements RatesSource {
  readonly kind = 'recordings' as const
  readonly dir: string
  readonly entries: readonly RecordingEntry[]
  private readonly verified = new Map<string, Buffer>()

  private constructor(dir: string, entries: RecordingEntry[]) {
    this.dir = dir
    this.entries = entries
  }

  static async open(dir: string): Promise<RecordingsSource> {
    return new RecordingsSource(dir, await readIndex(dir))
  }

  /** The verified bytes of a recording; RecordingAbsent when listed without a body, RecordingCorrupted when changed. */
  async body(name: string): Promise<Buffer> {
    const cached = this.verified.get(name)
    if (cached) return cached
    const entry = this.entries.find((e) => e.name === name)
    if (!entry) throw new RangeError('no recording by that name')
    let bytes: Buffer
    try {
      bytes = await readFile(join(this.dir, `${name}.body`))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new RecordingAbsent(name)
      throw error
    }
    verifyBody(entry, bytes)
    this.verified.set(name, bytes)
    return bytes
  }

  /** Whether a listed recording's body file exists (without verifying it). */
  async isPresent(name: string): Promise<boolean> {
    if (this.verified.has(name)) return true
    try {
      await access(join(this.dir, `${name}.body`))
      return true
    } catch {
      return false
    }
  }

  private async replay(entry: RecordingEntry): Promise<UpstreamOutcome> {
    return classify({ status: entry.status, body: await this.body(entry.name) })
  }

  async window(request: WindowRequest, _now?: Date): Promise<UpstreamOutcome | SourceRefusal> {
    if (request.recording !== undefined) {
      const entry = this.entries.find((e) => e.name === request.recording)
      // The list of names that do exist is withheld on purpose: which names exist is what concealment protects.
      if (!entry) return { kind: 'source_refusal', text: `no recording named ${pyRepr(request.recording)}` }
      const recorded = recordedQuery(entry.url)?.currency
      if (request.currency !== '' && recorded !== request.currency) {
        return {
          kind: 'source_refusal',
          text: `the recording named ${pyRepr(request.recording)} does not hold ${seriesKey(request.currency)}`,
        }
      }
      return this.replay(entry)
    }
    // Otherwise replay the narrowest csvdata recording of this currency whose period covers the window.
    let best: { entry: RecordingEntry; width: number } | null = null
    for (const entry of this.entries) {
      const q = recordedQuery(entry.url)
      if (!q || q.currency !== request.currency || q.format !== 'csvdata') continue
      const lo = q.startPeriod ?? Number.NEGATIVE_INFINITY
      const hi = q.endPeriod ?? Number.POSITIVE_INFINITY
      if (lo > request.from || hi < request.to) continue
      if (!(await this.isPresent(entry.name))) continue
      const width = hi - lo
      if (!best || width < best.width) best = { entry, width }
    }
    if (!best) {
      return {
        kind: 'source_refusal',
        text: `no recording covers ${seriesKey(request.currency)} from ${formatDay(request.from)} to ${formatDay(request.to)}`,
      }
    }
    return this.replay(best.entry)
  }

  /** The series of every present 200 csvdata recording: what this directory can actually answer. */
  async catalogue(): Promise<string[]> {
    const keys = new Set<string>()
    for (const entry of this.entries) {
      const q = recordedQuery(entry.url)
      if (q?.format !== 'csvdata' || entry.status !== 200) continue
      if (await this.isPresent(entry.name)) keys.add(seriesKey(q.currency))
    }
    return [...keys].sort()
  }

  /** From a present full-history recording of the currency, if any; a single recording cannot show an end. */
  async extent(currency: string): Promise<SeriesExtent | null> {
    for (const entry of this.entries) {
      const q = recordedQuery(entry.url)
      if (!q || q.currency !== currency || q.format !== 'csvdata' || q.startPeriod !== null || q.endPeriod !== null)
        continue
      if (entry.status !== 200 || !(await this.isPresent(entry.name))) continue
      const outcome = await this.replay(entry)
      if (outcome.kind !== 'observations' || outcome.observations.length === 0) return null
      const obs = outcome.observations
      return {
        first: (obs[0] as { day: number }).day,
        last: (obs[obs.length - 1] as { day: number }).day,
        ended: false,
        coveredUntil: null,
      }
    }
    return null
  }

  async close(): Promise<void> {
    this.verified.clear()
  }
}
