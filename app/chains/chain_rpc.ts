import type Chain from '#models/chain'
import settings from '#settings/settings_service'
import { RpcPool } from '#chains/rpc_pool'

/** The RPC endpoints of a chain, with the configured timeout and cool-down, and its API key. */
export async function rpcFor(chain: Chain): Promise<RpcPool> {
  return new RpcPool(chain.rpcUrls, {
    timeoutMs: (await settings.get('chains.rpc_timeout_seconds')) * 1000,
    cooldownMs: (await settings.get('chains.rpc_cooldown_seconds')) * 1000,
    apiKey: chain.rpcApiKey(),
  })
}
