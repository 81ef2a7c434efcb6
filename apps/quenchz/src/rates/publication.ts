// When a day's rate counts as overdue: 16:00 Europe/Berlin plus one hour of grace, i.e. 17:00 Frankfurt local time.
import { civilFromDay, dayFromCivil, weekday } from './days.js'

/** The ECB publishes "around 16:00 CET"; the grace exists because it says "around". */
export const PUBLICATION_HOUR_LOCAL = 16
export const PUBLICATION_GRACE_HOURS = 1

const MS_PER_DAY = 86_400_000
const MS_PER_HOUR = 3_600_000

function lastSunday(year: number, month: number): number {
  const next = month === 12 ? dayFromCivil(year + 1, 1, 1) : dayFromCivil(year, month + 1, 1)
  const last = next - 1
  return last - ((weekday(last) + 1) % 7)
}

/**
 * Whether 17:00 local time in Frankfurt on this day falls in summer time (CEST, UTC+2).
 * EU rule (since 1996): from the last Sunday of March to the last Sunday of October, switching at 01:00 UTC, so on
 * both switch days 17:00 local is already on the new offset. 1981–1995 ended on the last Sunday of September;
 * before 1980 Germany kept no summer time. Computed, not looked up, so any year up to 9999 works.
 */
export function isSummerTimeAtFive(dayNumber: number): boolean {
  const { year } = civilFromDay(dayNumber)
  if (year < 1980) return false
  const start = year === 1980 ? dayFromCivil(1980, 4, 6) : lastSunday(year, 3)
  const end = year <= 1995 ? lastSunday(year, 9) : lastSunday(year, 10)
  return dayNumber >= start && dayNumber < end
}

/** Epoch milliseconds at which a missing rate for this day stops being "not yet published" (17:00 Frankfurt). */
export function overdueAtMs(dayNumber: number): number {
  const offsetHours = isSummerTimeAtFive(dayNumber) ? 2 : 1
  return dayNumber * MS_PER_DAY + (PUBLICATION_HOUR_LOCAL + PUBLICATION_GRACE_HOURS - offsetHours) * MS_PER_HOUR
}
