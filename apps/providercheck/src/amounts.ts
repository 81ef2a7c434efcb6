// Amounts for people: `2000 minor (20.00 USD)`. Money stays integer minor units everywhere else.

/**
 * An amount as people read it without guessing the unit: `2000 minor (20.00 USD)`. The minor units come first
 * because they are what the contract carries; the major amount uses the currency's ISO 4217 exponent (JPY 0,
 * USD 2, BHD 3) from the table below, so the wording does not depend on the runtime's Intl data. A currency the
 * table does not know is shown as `2000 minor (? XYZ)`, never guessed. Integer arithmetic only: money is never a
 * float here.
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

/**
 * ISO 4217 minor-unit exponents for currencies whose exponent is not 2, from the ISO 4217 code list ("List One",
 * column "Minor unit") published by SIX Financial Information, the standard's maintenance agency. A small table
 * on purpose: the listed codes differ from 2; COMMON_TWO lists the codes we know to be 2; any other code is shown
 * in minor units only, never guessed.
 */
const EXPONENT_NOT_TWO: Readonly<Record<string, number>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
}

const COMMON_TWO = new Set(
  (
    'AED ARS AUD BGN BRL CAD CHF CNY COP CZK DKK EGP EUR GBP HKD HUF IDR ILS INR MAD MXN MYR NGN NOK NZD PEN PHP ' +
    'PKR PLN RON RUB SAR SEK SGD THB TRY TWD UAH USD ZAR'
  ).split(' '),
)

/** The currency's minor-unit exponent, or undefined when this table does not know it. */
export function currencyExponent(currency: string): number | undefined {
  if (Object.hasOwn(EXPONENT_NOT_TWO, currency)) return EXPONENT_NOT_TWO[currency]
  return COMMON_TWO.has(currency) ? 2 : undefined
}

/** Every {amount_minor, currency} object in a value, with its JSON path (e.g. `refunds[0].amount`). */
export function amountsIn(value: unknown, path = ''): { path: string; text: string }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => amountsIn(v, `${path}[${i}]`))
  if (typeof value !== 'object' || value === null) return []
  const o = value as Record<string, unknown>
  if (typeof o.amount_minor === 'number' && typeof o.currency === 'string')
    return [{ path: path || '(top)', text: formatAmount(o.amount_minor, o.currency) }]
  return Object.entries(o).flatMap(([k, v]) => amountsIn(v, path === '' ? k : `${path}.${k}`))
}
