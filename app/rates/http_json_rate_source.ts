import { Decimal } from '#support/text/money'
import { RateSourceError, type RateSource } from '#rates/rate_source'

/**
 * Rates from an HTTP JSON API of the form
 *   GET {url}/{fiat}.json → { "<fiat>": { "<token>": <tokens per 1 fiat> } }
 * (lower-case codes), e.g. the free currency APIs published on CDNs.
 */
export class HttpJsonRateSource implements RateSource {
  readonly name = 'http-json'

  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs: number
  ) {}

  async fetch(fiat: string): Promise<Map<string, Decimal>> {
    const code = fiat.toLowerCase()
    const url = `${this.baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(code)}.json`
    let response: Response
    try {
      response = await fetch(url, {
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'follow',
      })
    } catch (error) {
      throw new RateSourceError(`rate source ${url} is unreachable: ${(error as Error).message}`)
    }
    if (!response.ok)
      throw new RateSourceError(`rate source ${url} answered HTTP ${response.status}`)

    let body: unknown
    try {
      body = await response.json()
    } catch {
      throw new RateSourceError(`rate source ${url} did not answer JSON`)
    }
    const table = (body as Record<string, unknown> | null)?.[code]
    if (!table || typeof table !== 'object') {
      throw new RateSourceError(`rate source ${url} has no "${code}" object`)
    }

    const rates = new Map<string, Decimal>()
    for (const [token, value] of Object.entries(table)) {
      if (typeof value !== 'number' && typeof value !== 'string') continue
      const rate = new Decimal(String(value))
      if (rate.isFinite() && rate.gt(0)) rates.set(token.toUpperCase(), rate)
    }
    return rates
  }
}
