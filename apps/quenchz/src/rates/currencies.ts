// ISO 4217 minor-unit exponents for the euro and the 41 currencies of the ECB's eurofxref-hist file.
// Withdrawn currencies (CYP, EEK, LTL, LVL, MTL, ROL, SIT, SKK, TRL, HRK) use the exponent ISO 4217 listed while
// they were current. A currency not in this table is refused by rates.convert rather than guessed.
const EXPONENTS: Readonly<Record<string, number>> = {
  EUR: 2,
  USD: 2,
  JPY: 0,
  BGN: 2,
  CYP: 2,
  CZK: 2,
  DKK: 2,
  EEK: 2,
  GBP: 2,
  HUF: 2,
  LTL: 2,
  LVL: 2,
  MTL: 2,
  PLN: 2,
  ROL: 2,
  RON: 2,
  SEK: 2,
  SIT: 2,
  SKK: 2,
  CHF: 2,
  ISK: 0,
  NOK: 2,
  HRK: 2,
  RUB: 2,
  TRL: 0,
  TRY: 2,
  AUD: 2,
  BRL: 2,
  CAD: 2,
  CNY: 2,
  HKD: 2,
  IDR: 2,
  ILS: 2,
  INR: 2,
  KRW: 0,
  MXN: 2,
  MYR: 2,
  NZD: 2,
  PHP: 2,
  SGD: 2,
  THB: 2,
  ZAR: 2,
}

/** The ISO 4217 minor-unit exponent of a currency (2 for cents), or null when this table does not know it. */
export function minorUnitExponent(currency: string): number | null {
  return Object.hasOwn(EXPONENTS, currency) ? (EXPONENTS[currency] as number) : null
}

/** Every currency with a known exponent, sorted. */
export function knownCurrencies(): string[] {
  return Object.keys(EXPONENTS).sort()
}
