import { compatSettings } from '#plugins/compat/compat_settings'
import assetCatalog from '#services/asset_catalog'
import BusinessError from '#exceptions/business_error'

export type CompatTarget = { token?: string; network?: string; currency: string }

/**
 * Token, network and currency of a compat order (spec, "Resolution"):
 * 1. a `type` that is a currently available `token.network` selector decides
 *    token and network; `alipay` is ignored; anything else is refused;
 * 2. otherwise the request's token and network;
 * 3. each one still missing comes from compat.default_token / _network;
 * 4. currency: the request's, else compat.default_currency, else CNY.
 * Both resolved: a concrete order; neither: a placeholder; one: refused.
 */
export async function resolveCompatTarget(fields: {
  type?: string
  token?: string
  network?: string
  currency?: string
}): Promise<CompatTarget> {
  let token = fields.token
  let network = fields.network

  const type = fields.type
  if (type !== undefined && type.toLowerCase() !== 'alipay') {
    const selector = await parseSelector(type)
    if (!selector) {
      throw BusinessError.parameter(
        `The type field must be alipay or an available token.network selector such as usdt.tron, not "${type}"`
      )
    }
    token = selector.token
    network = selector.network
  } else {
    if (!token) {
      const defaultToken = await compatSettings.get('compat.default_token')
      token = defaultToken.toUpperCase() || undefined
    }
    if (!network) {
      const defaultNetwork = await compatSettings.get('compat.default_network')
      network = defaultNetwork.toLowerCase() || undefined
    }
  }

  if (Boolean(token) !== Boolean(network)) {
    throw BusinessError.parameter(
      `token and network must both be known or both be empty (token: ${token ?? 'none'}, network: ${network ?? 'none'})`
    )
  }
  let currency = fields.currency
  if (!currency) {
    const defaultCurrency = await compatSettings.get('compat.default_currency')
    currency = defaultCurrency.toUpperCase() || 'CNY'
  }
  return { token, network, currency }
}

/** `usdt.tron` → {USDT, tron} when that combination is offered now. */
async function parseSelector(type: string): Promise<{ token: string; network: string } | null> {
  const dot = type.indexOf('.')
  if (dot <= 0 || dot === type.length - 1) return null
  const token = type.slice(0, dot).toUpperCase()
  const network = type.slice(dot + 1).toLowerCase()
  const offered = await assetCatalog.supportedAssets()
  const asset = offered.find((entry) => entry.network === network)
  return asset && asset.tokens.includes(token) ? { token, network } : null
}
