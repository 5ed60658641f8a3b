/**
 * Which endpoints serve TronGrid's v1 account index. A plain java-tron
 * node (a typical backup URL) serves `/wallet` and `/walletsolidity` only:
 * it can verify a reference and give the head, never list an account.
 *
 * Capability is detected, not configured: TronGrid answers any valid
 * account with 200 (an empty list at worst), so a 404 on `/v1/accounts/…`
 * can only mean "no index here". The operator keeps one plain list of
 * URLs, and a provider that adds the index later is picked up: the mark
 * expires after INDEXLESS_TTL_MS, costing one probe (a 404) per hour.
 */
export const INDEXLESS_TTL_MS = 60 * 60_000

/** URL → time until which it is taken to lack the index (process-wide, like the pool's health). */
const indexless = new Map<string, number>()

export function markIndexless(url: string, now = Date.now()) {
  indexless.set(url, now + INDEXLESS_TTL_MS)
}

/** False while `url` is known to lack the v1 index (the pool's `eligible` for listings). */
export function hasIndex(url: string): boolean {
  const until = indexless.get(url)
  if (until === undefined) return true
  if (until > Date.now()) return false
  indexless.delete(url)
  return true
}

/**
 * TronGrid's penalty: past its per-second limit it refuses every request
 * for a while ("... the query server is suspended for 30s", HTTP 403).
 * Requests sent meanwhile are refused too and count against the quota,
 * so the URL is not asked until the penalty is over.
 */
const penalised = new Map<string, number>()

/** Reads TronGrid's penalty text; true when `body` announced one (remembered for `url`). */
export function notePenalty(url: string, body: string, now = Date.now()): boolean {
  const match = /suspended for (\d+)\s*s/i.exec(body)
  if (!match) return false
  penalised.set(url, now + Number(match[1]) * 1000)
  return true
}

/** False while `url` serves a penalty (the pool's `eligible` for every TronGrid request). */
export function notPenalised(url: string): boolean {
  const until = penalised.get(url)
  if (until === undefined) return true
  if (until > Date.now()) return false
  penalised.delete(url)
  return true
}

/** Forget what was learnt (tests). */
export function resetEndpointCapabilities() {
  indexless.clear()
  penalised.clear()
}
