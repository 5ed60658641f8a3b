/** Longest wait between two callback attempts. */
export const MAX_RETRY_DELAY_MS = 300_000

/**
 * Delay before retry `retry` (1 = the first retry, after the first failed
 * attempt): base × 2^(retry−1) seconds, capped at 5 minutes, then shortened
 * by up to 20 % at random so that many callbacks failing together do not
 * come back together.
 */
export function retryDelayMs(
  retry: number,
  baseSeconds: number,
  random: () => number = Math.random
): number {
  const exponential = baseSeconds * 1000 * 2 ** (retry - 1)
  const capped = Math.min(MAX_RETRY_DELAY_MS, exponential)
  return Math.round(capped * (0.8 + 0.2 * random()))
}

/** The merchant acknowledges with HTTP 200 and a body of ok / success. */
export function isAcknowledged(httpStatus: number | null, body: string): boolean {
  if (httpStatus !== 200) return false
  const text = body.trim().toLowerCase()
  return text === 'ok' || text === 'success'
}
