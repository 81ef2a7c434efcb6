// Exact conversion through the euro on integer minor units: BigInt on the rates' decimal text, never floats.

/** The rounding rule, stated in every rates.convert answer. */
export const ROUNDING_RULE =
  'exact: amount_minor x 10^(to exponent - from exponent) x to rate / from rate, the rates being the vendor decimal text (units per euro, the euro itself exactly 1), rounded once to a whole minor unit, half to even'

/** A decimal lexeme such as `1.1711` as numerator/10^scale. */
function decimal(lexeme: string): { n: bigint; scale: number } {
  const negative = lexeme.startsWith('-')
  const body = negative ? lexeme.slice(1) : lexeme
  const [whole = '0', frac = ''] = body.split('.')
  const n = BigInt(whole + frac)
  return { n: negative ? -n : n, scale: frac.length }
}

/** Rounds numerator/denominator (denominator > 0) to the nearest integer, ties to even. */
export function divideHalfEven(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive')
  let q = numerator / denominator
  let r = numerator % denominator
  // BigInt division truncates toward zero; move to floor so the remainder is non-negative.
  if (r < 0n) {
    q -= 1n
    r += denominator
  }
  const twice = 2n * r
  if (twice > denominator || (twice === denominator && q % 2n !== 0n)) q += 1n
  return q
}

/**
 * Converts `amountMinor` of one currency to minor units of another through the euro.
 * `fromRate`/`toRate` are units per euro as decimal text ('1' for the euro). Rounded once, half to even.
 */
export function convertMinor(
  amountMinor: bigint,
  from: { rate: string; exponent: number },
  to: { rate: string; exponent: number },
): bigint {
  const f = decimal(from.rate)
  const t = decimal(to.rate)
  if (f.n <= 0n || t.n <= 0n) throw new RangeError('rates must be positive')
  // amount x 10^(et-ef) x (t.n/10^t.scale) / (f.n/10^f.scale)
  let numerator = amountMinor * t.n * 10n ** BigInt(f.scale)
  let denominator = f.n * 10n ** BigInt(t.scale)
  const shift = to.exponent - from.exponent
  if (shift >= 0) numerator *= 10n ** BigInt(shift)
  else denominator *= 10n ** BigInt(-shift)
  return divideHalfEven(numerator, denominator)
}
