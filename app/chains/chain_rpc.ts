import { isIP } from 'node:net'
import type Chain from '#models/chain'
import { isPrivateAddress } from '#callbacks/safe_http'
import settings from '#settings/settings_service'
import chainRegistry from '#chains/chain_registry'
import { RpcPool, type RpcBudget } from '#chains/rpc_pool'
import { DatabaseEndpointMemory } from '#chains/endpoint_memory'

/** A per-day of 0 (operator or setting) means no daily cap. */
const dailyCap = (value: number) => (value > 0 ? value : null)

/** A node on this machine or the local network: the operator's own, no provider limits it. */
export function isOwnNode(url: string): boolean {
  let host: string
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  } catch {
    return false
  }
  if (host === 'localhost' || host.endsWith('.localhost')) return true
  return isIP(host) !== 0 && isPrivateAddress(host)
}

/**
 * The request budget of one endpoint of the chain, field by field: the
 * operator's override on the chain, else the family's default for that
 * provider (its documented free tier), else none for the operator's own
 * node (loopback or private address: nobody limits it), else the core
 * settings. Null: unlimited.
 */
export function budgetOf(
  chain: Chain,
  url: string,
  apiKey: string,
  fallback: { perSecond: number; perDay: number }
): RpcBudget | null {
  const family = chainRegistry.find(chain.family)?.rpcBudget?.(url, apiKey) ?? null
  const overridden =
    (chain.rpcRequestsPerSecond ?? null) !== null || (chain.rpcRequestsPerDay ?? null) !== null
  if (!family && !overridden && isOwnNode(url)) return null
  return {
    perSecond: chain.rpcRequestsPerSecond ?? family?.perSecond ?? fallback.perSecond,
    perDay:
      chain.rpcRequestsPerDay !== null && chain.rpcRequestsPerDay !== undefined
        ? dailyCap(chain.rpcRequestsPerDay)
        : family
          ? family.perDay
          : dailyCap(fallback.perDay),
  }
}

/** What a one-off pool (a connection test) changes of the chain's own. */
export type RpcPoolOverrides = {
  /** These endpoints instead of the chain's (e.g. one at a time). */
  urls?: string[]
  timeoutMs?: number
  /** Retries after a 429 or a 5xx (0: report the first answer). */
  retries?: number
  /**
   * 'verify': a payer's transaction-hash check, on the verification budget
   * (chains.verify_requests_per_*), counted apart from the scanners'.
   */
  purpose?: 'verify'
  /**
   * False: the endpoints' shared state (held, learned log range) is
   * neither read nor written, e.g. for a network not saved yet.
   */
  remember?: boolean
}

/**
 * The verification budget of one endpoint: the verify settings, never
 * faster than the endpoint's own pace. Counted apart from the endpoint's
 * common budget, so that payers asking about hashes (anyone holding a
 * trade_id can) never spend what the scanners need. The operator's own
 * node (no budget) is not paced per second; its daily cap still holds.
 */
export function verificationBudgetOf(
  endpoint: RpcBudget | null,
  verify: { perSecond: number; perDay: number }
): RpcBudget {
  return {
    perSecond: endpoint ? Math.min(endpoint.perSecond, verify.perSecond) : Number.POSITIVE_INFINITY,
    perDay: dailyCap(verify.perDay),
  }
}

/**
 * The RPC endpoints of a chain, with the configured timeout, cool-down and
 * budgets, and its API key; `overrides` for a one-off pool.
 */
export async function rpcFor(chain: Chain, overrides: RpcPoolOverrides = {}): Promise<RpcPool> {
  const apiKey = chain.rpcApiKey()
  const fallback = {
    perSecond: await settings.get('chains.rpc_requests_per_second'),
    perDay: await settings.get('chains.rpc_requests_per_day'),
  }
  const urls = overrides.urls ?? chain.rpcUrls
  const verify =
    overrides.purpose === 'verify'
      ? {
          perSecond: await settings.get('chains.verify_requests_per_second'),
          perDay: await settings.get('chains.verify_requests_per_day'),
        }
      : null
  return new RpcPool(urls, {
    timeoutMs: overrides.timeoutMs ?? (await settings.get('chains.rpc_timeout_seconds')) * 1000,
    cooldownMs: (await settings.get('chains.rpc_cooldown_seconds')) * 1000,
    apiKey,
    network: chain.network,
    purpose: overrides.purpose,
    budgetFor: (url) => {
      const endpoint = budgetOf(chain, url, apiKey, fallback)
      return verify ? verificationBudgetOf(endpoint, verify) : endpoint
    },
    memory:
      overrides.remember === false
        ? undefined
        : await DatabaseEndpointMemory.load(chain.network, urls, apiKey),
    ...(overrides.retries !== undefined ? { retries: overrides.retries } : {}),
  })
}
