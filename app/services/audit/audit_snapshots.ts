import type ApiKey from '#models/api_key'
import type Chain from '#models/chain'
import type Token from '#models/token'
import type Wallet from '#models/wallet'
import type Rate from '#models/rate'
import type User from '#models/user'
import type Order from '#models/order'
import { MASK, maskSecret, redactUrl } from '#support/http/redaction'

/** A secret as the audit log shows it: masked like listings; MASK when it cannot be read. */
function masked(reveal: () => string): string {
  try {
    return maskSecret(reveal())
  } catch {
    return MASK
  }
}

/** The state of each audited kind of row, as written before → after (secrets masked here already). */
export const snapshot = {
  apiKey: (key: ApiKey) => ({
    pid: key.pid,
    status: key.status,
    ipAllowlist: key.ipAllowlist,
    note: key.note,
    secretKey: masked(() => key.signingSecret()),
  }),
  chain: (chain: Chain) => ({
    network: chain.network,
    family: chain.family,
    displayName: chain.displayName,
    enabled: chain.enabled,
    rpcUrls: (chain.rpcUrls ?? []).map((url) => redactUrl(url)),
    wsUrl: chain.wsUrl ? redactUrl(chain.wsUrl) : null,
    apiKey: masked(() => chain.rpcApiKey()),
    confirmations: chain.confirmations,
    scanIntervalSeconds: chain.scanIntervalSeconds,
    blockTimeMs: chain.blockTimeMs,
    explorerTxUrl: chain.explorerTxUrl,
    rpcRequestsPerSecond: chain.rpcRequestsPerSecond ?? null,
    rpcRequestsPerDay: chain.rpcRequestsPerDay ?? null,
    options: chain.options ?? {},
  }),
  token: (token: Token) => ({
    network: token.network,
    symbol: token.symbol,
    contract: token.contract,
    decimals: token.decimals,
    amountPrecision: token.amountPrecision,
    enabled: token.enabled,
  }),
  wallet: (wallet: Wallet) => ({
    network: wallet.network,
    address: wallet.address,
    enabled: wallet.enabled,
    note: wallet.note,
  }),
  rate: (rate: Rate) => ({
    token: rate.token,
    fiat: rate.fiat,
    rate: rate.rate,
    source: rate.source,
  }),
  /** What an operator's action on an order changes (status, payment, callback); no merchant secrets live here. */
  order: (order: Order) => ({
    tradeId: order.tradeId,
    orderId: order.orderId,
    pid: order.pid,
    status: order.status,
    network: order.network,
    token: order.token,
    receiveAddress: order.receiveAddress,
    actualAmount: order.actualAmount,
    blockTransactionId: order.blockTransactionId,
    paidAt: order.paidAt ?? null,
    expirationTime: order.expirationTime,
    callbackStatus: order.callbackStatus,
    callbackAttempts: order.callbackAttempts,
  }),
  user: (user: User) => ({
    email: user.email,
    role: user.role,
    twoFactor: user.totpEnabledAt !== null && user.totpEnabledAt !== undefined,
    passwordChangedAt: user.passwordChangedAt ?? null,
    disabled: user.disabledAt !== null && user.disabledAt !== undefined,
  }),
}
