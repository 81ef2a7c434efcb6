// Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. The platform honours it on 409 in_progress, 429
// and 503; this reads the header as milliseconds from now, or undefined when it is absent or cannot be read.
import type { IncomingHttpHeaders } from 'node:http'

/** Longest delay representable by a timer (2^31-1 ms); any longer one is refused as beyond the cap anyway. */
const TIMER_MAX_MS = 2 ** 31 - 1

/** The header as a delay in milliseconds (0 for a date already past); undefined when absent or malformed. */
export function retryAfterMs(headers: IncomingHttpHeaders, now: number = Date.now()): number | undefined {
  const raw = headers['retry-after']
  if (typeof raw !== 'string') return undefined
  const value = raw.trim()
  if (/^\d{1,10}$/.test(value)) return Math.min(Number(value) * 1000, TIMER_MAX_MS)
  // An HTTP-date names a weekday and GMT (IMF-fixdate and the two obsolete forms); nothing else is read as a date.
  if (!/^[A-Za-z]{3}.*GMT$/.test(value)) return undefined
  const at = Date.parse(value)
  if (Number.isNaN(at)) return undefined
  return Math.min(Math.max(0, at - now), TIMER_MAX_MS)
}
