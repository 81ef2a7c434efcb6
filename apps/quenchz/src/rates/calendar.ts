// The TARGET closing-day calendar (digest §6): weekend, the two special closures, then the annual rules from 2000.
import { civilFromDay, dayFromCivil, parseIsoDay, weekday } from './days.js'

/** Every reason the calendar can give for a day without a rate, as serialised. */
export type ClosingReason =
  | 'weekend'
  | 'new-years-day'
  | 'good-friday'
  | 'easter-monday'
  | 'labour-day'
  | 'christmas-day'
  | '26-december'
  | 'special-closure'

/** First date carrying a value in EXR.D.USD.EUR.SP00.A (and in eurofxref-hist). */
export const SERIES_BEGINS = '1999-01-04'
/** The annual closing rules apply from this date; 1999 ran on national calendars. */
export const ANNUAL_RULES_FROM = '2000-01-01'
/** The last date on which a closure was encoded as a row with an empty value and OBS_STATUS H. */
export const PLACEHOLDER_ROWS_END = '2012-05-01'

export const SERIES_BEGINS_DAY = parseIsoDay(SERIES_BEGINS) as number
const ANNUAL_RULES_DAY = parseIsoDay(ANNUAL_RULES_FROM) as number
// 1999-12-31 millennium changeover and 2001-12-31 euro cash changeover: no annual rule produces either.
const SPECIAL_CLOSURES = new Set([dayFromCivil(1999, 12, 31), dayFromCivil(2001, 12, 31)])

/** Easter Sunday by the anonymous Gregorian algorithm (Meeus/Jones/Butcher), all divisions integer. */
export function easterSunday(year: number): { month: number; day: number } {
  const a = year % 19
  const b = Math.floor(year / 100)
  const c = year % 100
  const d = Math.floor(b / 4)
  const e = b % 4
  const f = Math.floor((b + 8) / 25)
  const g = Math.floor((b - f + 1) / 3)
  const h = (19 * a + b - d - g + 15) % 30
  const i = Math.floor(c / 4)
  const k = c % 4
  const l = (32 + 2 * e + 2 * i - h - k) % 7
  const m = Math.floor((a + 11 * h + 22 * l) / 451)
  const n = h + l - 7 * m + 114
  return { month: Math.floor(n / 31), day: (n % 31) + 1 }
}

const easterCache = new Map<number, number>()
function easterDay(year: number): number {
  let day = easterCache.get(year)
  if (day === undefined) {
    const e = easterSunday(year)
    day = dayFromCivil(year, e.month, e.day)
    easterCache.set(year, day)
  }
  return day
}

/** Why no rate is owed on this day (a day number), or null when the calendar says a rate is owed. First match wins. */
export function closingReason(dayNumber: number): ClosingReason | null {
  if (weekday(dayNumber) >= 5) return 'weekend'
  if (SPECIAL_CLOSURES.has(dayNumber)) return 'special-closure'
  if (dayNumber < ANNUAL_RULES_DAY) return null
  const { year, month, day } = civilFromDay(dayNumber)
  const easter = easterDay(year)
  if (dayNumber === easter - 2) return 'good-friday'
  if (dayNumber === easter + 1) return 'easter-monday'
  if (month === 1 && day === 1) return 'new-years-day'
  if (month === 5 && day === 1) return 'labour-day'
  if (month === 12 && day === 25) return 'christmas-day'
  if (month === 12 && day === 26) return '26-december'
  return null
}
