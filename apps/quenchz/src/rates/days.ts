// Calendar dates as integer day numbers (days since 1970-01-01, proleptic Gregorian). Every date in a window is built
// as start + offset from integers, so 9999-12-31 never overflows and no Date object is ever constructed per day.

/** Day number of a civil date (H. Hinnant's days_from_civil). */
export function dayFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const mp = (month + 9) % 12
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/** Civil date of a day number. */
export function civilFromDay(dayNumber: number): { year: number; month: number; day: number } {
  const z = dayNumber + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1
  const month = mp < 10 ? mp + 3 : mp - 9
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day }
}

/** 0 = Monday … 6 = Sunday. 1970-01-01 was a Thursday. */
export function weekday(dayNumber: number): number {
  return (((dayNumber + 3) % 7) + 7) % 7
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/**
 * Parses exactly `YYYY-MM-DD` (years 0001–9999) to a day number, or returns null.
 * Deliberately stricter than Python's fromisoformat: `20260401` and week dates are refused, because the error
 * message promises YYYY-MM-DD and one spelling per date keeps echoed dates unambiguous.
 */
export function parseIsoDay(text: unknown): number | null {
  if (typeof text !== 'string') return null
  const m = ISO_DATE.exec(text)
  if (!m) return null
  const year = Number(m[1])
  const month = Number(m[2])
  const day = Number(m[3])
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null
  return dayFromCivil(year, month, day)
}

/** `YYYY-MM-DD` of a day number. */
export function formatDay(dayNumber: number): string {
  const { year, month, day } = civilFromDay(dayNumber)
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`
}

/** An integer with comma thousands separators, as the refusal messages print them (3,652,058). */
export function withThousands(n: number): string {
  const sign = n < 0 ? '-' : ''
  return sign + String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
}

/** ISO 8601 UTC instant with a Z suffix; whole seconds print without a fraction (2026-08-26T12:00:00Z). */
export function formatInstant(when: Date): string {
  const iso = when.toISOString()
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso
}
