import type Chain from '#models/chain'
import { InvalidOptionsError, pluginReason } from '#chains/chain_family'

/**
 * TRON chain options (`chain:set tron --option name=value`).
 *
 * - lookbackMinutes: every run lists again from this long before the solid
 *   head, for rows TronGrid's v1 index shows late. Re-listed rows cost no
 *   lookup, only page bytes, so the default is generous (TronGrid's index
 *   normally trails the chain by seconds; 30 minutes covers its known
 *   stalls and a failover to a provider that trails more).
 * - deepScanHours / deepScanEveryMinutes: a deep re-scan lists the last
 *   `deepScanHours` of every stream (older than the look-back) every
 *   `deepScanEveryMinutes`, for rows indexed later still. 0 hours turns it off.
 */
export type TronOptions = {
  lookbackMinutes: number
  deepScanHours: number
  deepScanEveryMinutes: number
}

export const TRON_OPTION_DEFAULTS: TronOptions = {
  lookbackMinutes: 30,
  deepScanHours: 24,
  deepScanEveryMinutes: 60,
}

const LIMITS: Record<keyof TronOptions, { min: number; max: number }> = {
  // Below 10 minutes the look-back would miss rows the former fixed window caught.
  lookbackMinutes: { min: 10, max: 24 * 60 },
  // TronGrid keeps account history far longer; 72 h bounds the pages of a pass.
  deepScanHours: { min: 0, max: 72 },
  // More often than every 10 minutes, the deep pass would cost more than the scans it backs up.
  deepScanEveryMinutes: { min: 10, max: 24 * 60 },
}

export function validateTronOptions(options: Record<string, unknown>): Record<string, unknown> {
  const normalised: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    if (!(name in LIMITS)) {
      throw new InvalidOptionsError(
        `Unknown TRON option "${name}"; TRON options: ${Object.keys(LIMITS).join(', ')}`,
        pluginReason('tron', 'unknown_option', { name, names: Object.keys(LIMITS).join(', ') })
      )
    }
    const { min, max } = LIMITS[name as keyof TronOptions]
    const text = String(value).trim()
    const parsed = /^\d+$/.test(text) ? Number(text) : Number.NaN
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      throw new InvalidOptionsError(
        `TRON option ${name} must be a whole number from ${min} to ${max}, not "${text}"`,
        pluginReason('tron', 'option_range', { name, min, max, value: text })
      )
    }
    normalised[name] = parsed
  }
  return normalised
}

/** The options of a stored chain, with defaults. */
export function tronOptions(chain: Chain): TronOptions {
  const options = chain.options ?? {}
  const pick = (name: keyof TronOptions) =>
    typeof options[name] === 'number' ? (options[name] as number) : TRON_OPTION_DEFAULTS[name]
  return {
    lookbackMinutes: pick('lookbackMinutes'),
    deepScanHours: pick('deepScanHours'),
    deepScanEveryMinutes: pick('deepScanEveryMinutes'),
  }
}
