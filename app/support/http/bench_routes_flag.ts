/**
 * BENCH_ROUTES: the benchmark-only routes under /__bench
 * (start/bench_routes.ts, for bench/), which skip the merchant API's
 * signature and limits. Refused in production, so that a copied
 * benchmark environment can never open them on a live gateway: the start
 * stops with this message instead.
 */
export function parseBenchRoutes(
  key: string,
  value: string | undefined,
  nodeEnv: string | undefined
): boolean {
  const text = (value ?? '').trim().toLowerCase()
  if (text === '' || text === 'false' || text === '0') return false
  if (text !== 'true' && text !== '1')
    throw new Error(`${key} must be true or false, not "${value}"`)
  if (nodeEnv === 'production') {
    throw new Error(
      `${key}=true is refused when NODE_ENV=production: the benchmark routes under /__bench skip signatures and limits. Unset ${key} (it is for bench/ on a development machine)`
    )
  }
  return true
}
