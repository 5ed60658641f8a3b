import type Chain from '#models/chain'
import type Token from '#models/token'
import chainRegistry from '#chains/chain_registry'
import configCache from '#services/config_cache'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'

export type SupportedAsset = { network: string; display_name: string; tokens: string[] }

export type PayableAsset = { chain: Chain; token: Token; addresses: string[] }

/**
 * What payers can pay with: enabled chains (of a family some enabled
 * plugin brings) that have at least one enabled wallet and one enabled
 * token. Both the config endpoint and order
 * creation read it here, so they never disagree. Read from the in-process
 * configuration cache (services/config_cache.ts: a change is seen within 2 s
 * everywhere, at once in the process that made it).
 */
export class AssetCatalog {
  async supportedAssets(): Promise<SupportedAsset[]> {
    const config = await configCache.snapshot()
    const chains = [...config.chainsByNetwork.values()]
      .filter((chain) => chain.enabled && chainRegistry.has(chain.family))
      .sort(
        (a, b) =>
          a.sortOrder - b.sortOrder || (a.network < b.network ? -1 : a.network > b.network ? 1 : 0)
      )
    const assets: SupportedAsset[] = []
    for (const chain of chains) {
      const symbols = [...(config.tokens.get(chain.network)?.values() ?? [])]
        .filter((token) => token.enabled)
        .sort((a, b) => a.id - b.id)
        .map((token) => token.symbol)
      if (symbols.length === 0 || !config.enabledAddresses.has(chain.network)) continue
      assets.push({ network: chain.network, display_name: chain.displayName, tokens: symbols })
    }
    return assets
  }

  /**
   * Resolves a (network, token) pair for a new payment or refuses it with
   * the spec's code: unknown network or token 10016, disabled chain 10014,
   * no receiving wallet 10003.
   */
  async payable(network: string, symbol: string): Promise<PayableAsset> {
    const config = await configCache.snapshot()
    const chain = config.chainsByNetwork.get(network)
    // A chain whose family's plugin is off is unknown to payers.
    if (!chain || !chainRegistry.has(chain.family)) {
      throw new BusinessError(
        ErrorCode.ASSET_NOT_FOUND,
        `Supported asset does not exist: unknown network "${network}"`
      )
    }
    if (!chain.enabled) {
      throw new BusinessError(ErrorCode.CHAIN_DISABLED, `Chain is not enabled: ${network}`)
    }
    const token = config.tokens.get(network)?.get(symbol)
    if (!token || !token.enabled) {
      throw new BusinessError(
        ErrorCode.ASSET_NOT_FOUND,
        `Supported asset does not exist: ${symbol} on ${network}`
      )
    }
    const addresses = config.enabledAddresses.get(network) ?? []
    if (addresses.length === 0) {
      throw new BusinessError(
        ErrorCode.NO_WALLET,
        `No available wallet address on ${network}; payment cannot start`
      )
    }
    return { chain, token, addresses }
  }
}

const assetCatalog = new AssetCatalog()
export default assetCatalog
