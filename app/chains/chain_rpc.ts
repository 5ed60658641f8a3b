import type Chain from '#models/chain'
import settings from '#settings/settings_service'
import chainRegistry from '#chains/chain_registry'
import { RpcPool, type RpcBudget } from '#chains/rpc_pool'

/** A per-day of 0 (operator or setting) means no daily cap. */
const dailyCap = (value: number) => (value > 0 ? value : null)

/**
 * The request budget of one endpoint of the chain, field by field: the
 * operator's override on the chain, else the family's default for that
 * provider (its documented free tier), else the core settings.
 */
export function budgetOf(
  chain: Chain,
  url: string,
  apiKey: string,
  fallback: { perSecond: number; perDay: number }
): RpcBudget {
  const family = chainRegistry.find(chain.family)?.rpcBudget?.(url, apiKey) ?? null
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

/** The RPC endpoints of a chain, with the configured timeout, cool-down and budgets, and its API key. */
export async function rpcFor(chain: Chain): Promise<RpcPool> {
  const apiKey = chain.rpcApiKey()
  const fallback = {
    perSecond: await settings.get('chains.rpc_requests_per_second'),
    perDay: await settings.get('chains.rpc_requests_per_day'),
  }
  return new RpcPool(chain.rpcUrls, {
    timeoutMs: (await settings.get('chains.rpc_timeout_seconds')) * 1000,
    cooldownMs: (await settings.get('chains.rpc_cooldown_seconds')) * 1000,
    apiKey,
    budgetFor: (url) => budgetOf(chain, url, apiKey, fallback),
  })
}
