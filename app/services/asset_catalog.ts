import Chain from '#models/chain'
import Token from '#models/token'
import Wallet from '#models/wallet'
import chainRegistry from '#chains/chain_registry'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'

export type SupportedAsset = { network: string; display_name: string; tokens: string[] }

export type PayableAsset = { chain: Chain; token: Token; addresses: string[] }

/**
 * What payers can pay with: enabled chains (of a family some enabled
 * plugin brings) that have at least one enabled wallet and one enabled
 * token. Both the config endpoint and order
 * creation read it here, so they never disagree.
 */
export class AssetCatalog {
  async supportedAssets(): Promise<SupportedAsset[]> {
    const chains = (await Chain.query().where('enabled', true).orderBy('sort_order').orderBy('network')).filter(
      (chain) => chainRegistry.has(chain.family)
    )
    if (chains.length === 0) return []
    const networks = chains.map((chain) => chain.network)
    const [tokens, wallets] = await Promise.all([
      Token.query().whereIn('network', networks).where('enabled', true).orderBy('id'),
      Wallet.query().whereIn('network', networks).where('enabled', true).select('network'),
    ])
    const withWallets = new Set(wallets.map((wallet) => wallet.network))

    const assets: SupportedAsset[] = []
    for (const chain of chains) {
      const symbols = tokens.filter((token) => token.network === chain.network).map((token) => token.symbol)
      if (symbols.length === 0 || !withWallets.has(chain.network)) continue
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
    const chain = await Chain.findBy('network', network)
    // A chain whose family's plugin is off is unknown to payers.
    if (!chain || !chainRegistry.has(chain.family)) {
      throw new BusinessError(ErrorCode.ASSET_NOT_FOUND, `Supported asset does not exist: unknown network "${network}"`)
    }
    if (!chain.enabled) {
      throw new BusinessError(ErrorCode.CHAIN_DISABLED, `Chain is not enabled: ${network}`)
    }
    const token = await Token.query().where('network', network).where('symbol', symbol).first()
    if (!token || !token.enabled) {
      throw new BusinessError(
        ErrorCode.ASSET_NOT_FOUND,
        `Supported asset does not exist: ${symbol} on ${network}`
      )
    }
    const wallets = await Wallet.query().where('network', network).where('enabled', true).orderBy('id')
    if (wallets.length === 0) {
      throw new BusinessError(ErrorCode.NO_WALLET, `No available wallet address on ${network}; payment cannot start`)
    }
    return { chain, token, addresses: wallets.map((wallet) => wallet.address) }
  }
}

const assetCatalog = new AssetCatalog()
export default assetCatalog
