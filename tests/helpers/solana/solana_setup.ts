import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import type { ApiClient } from '@japa/api-client'
import type { Address, KeyPairSigner } from '@solana/kit'
import Order from '#models/order'
import settings from '#settings/settings_service'
import { RpcPool } from '#chains/rpc_pool'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import { SolanaTestChain } from '#tests/helpers/solana/solana_test_chain'
import type { SolanaRpcServer } from '#tests/helpers/solana/solana_rpc_server'

export const SOLANA = 'solana'

export type SolanaFixture = {
  chain: SolanaTestChain
  /** The test's own 6-decimals mint, configured as USDT of the solana network. */
  usdt: Address
  /** The receiving wallet added to the gateway (a key pair: it can sign, e.g. RecoverNested). */
  wallet: KeyPairSigner
  /** A customer holding SOL and USDT. */
  customer: KeyPairSigner
}

/**
 * A fresh litesvm ledger served by `server`, and the seeded `solana`
 * network pointed at it: USDT is the test's mint (6 decimals, precision 2),
 * SOL native (9 decimals), one wallet whose USDT account exists, rates
 * 1 USDT = 7.25 CNY and 1 SOL = 1000 CNY, callbacks allowed to 127.0.0.1.
 */
export async function prepareSolana(
  server: SolanaRpcServer,
  options: { confirmations?: number; rpcUrls?: string[] } = {}
): Promise<SolanaFixture> {
  RpcPool.reset()
  const chain = await SolanaTestChain.create()
  server.serve(chain)
  const usdt = await chain.createMint(6)
  const wallet = await chain.newWallet(1_000_000_000n)
  const customer = await chain.newWallet(50_000_000_000n)
  await chain.mintTo(customer.address, usdt, 1_000_000_000_000n)
  await chain.createTokenAccount(wallet.address, usdt)

  await chainAdmin.set(SOLANA, {
    rpcUrls: options.rpcUrls ?? [server.url],
    confirmations: options.confirmations ?? 32,
  })
  await chainAdmin.setToken(SOLANA, 'USDT', { contract: usdt, decimals: 6 })
  await walletAdmin.add(SOLANA, wallet.address)
  await rateAdmin.set('USDT', 'CNY', '7.25')
  await rateAdmin.set('SOL', 'CNY', '1000')
  await settings.set('callbacks.allow_private_targets', 'true')
  await settings.set('rate_limit.create_per_minute', '0')
  await settings.set('rate_limit.cashier_per_minute', '0')
  server.calls = []
  return { chain, usdt, wallet, customer }
}

/** Creates a solana order over HTTP (100 CNY: 13.8 USDT or USDC at 7.25, or 0.1 SOL) and returns its model. */
export async function solanaOrder(
  client: ApiClient,
  token: 'usdt' | 'usdc' | 'sol',
  overrides: Record<string, unknown> = {}
) {
  const response = await createOrder(
    client,
    orderParams({ network: SOLANA, token, amount: 100, ...overrides })
  )
  if (response.status() !== 200)
    throw new Error(`create failed: ${JSON.stringify(response.body())}`)
  return Order.findByOrFail('trade_id', response.body().data.trade_id)
}

/** Token units → base units of a 6-decimals token ("13.8" → 13800000n). */
export function usdtUnits(amount: string): bigint {
  const [whole, fraction = ''] = amount.split('.')
  return BigInt(whole + fraction.padEnd(6, '0'))
}

/** SOL → lamports ("0.1" → 100000000n). */
export function lamportsOf(amount: string): bigint {
  const [whole, fraction = ''] = amount.split('.')
  return BigInt(whole + fraction.padEnd(9, '0'))
}
