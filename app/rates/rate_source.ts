import type { Decimal } from '#support/text/money'

/**
 * A live source of exchange rates. `fetch(fiat)` returns, per upper-case
 * token symbol, how many tokens one unit of `fiat` buys.
 */
export interface RateSource {
  readonly name: string
  fetch(fiat: string): Promise<Map<string, Decimal>>
}

export class RateSourceError extends Error {}
