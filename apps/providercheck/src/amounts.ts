/**
 * An amount as people read it without guessing the unit: `2000 minor (20.00 USD)`. The minor units come first
 * because they are what the contract carries; the major amount uses the currency's ISO 4217 exponent (JPY 0,
 * USD 2, BHD 3) as the runtime's Intl data knows it. Integer arithmetic only: money is never a float here.
 */
export function formatAmount(amountMinor: number, currency: string): string {
  return `${amountMinor} minor (${majorUnits(amountMinor, currency)} ${currency})`
}

function majorUnits(amountMinor: number, currency: string): string {
  const exponent = currencyExponent(currency)
  if (!Number.isSafeInteger(amountMinor) || exponent === undefined) return '?'
  if (exponent === 0) return String(amountMinor)
  const digits = String(Math.abs(amountMinor)).padStart(exponent + 1, '0')
  const sign = amountMinor < 0 ? '-' : ''
  return `${sign}${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
}

/** The currency's minor-unit exponent, or undefined for a code the runtime does not know. */
function currencyExponent(currency: string): number | undefined {
  if (!/^[A-Z]{3}$/.test(currency)) return undefined
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits
  } catch {
    return undefined
  }
}
