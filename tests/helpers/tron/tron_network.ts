import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import type { ApiClient } from '@japa/api-client'
import Order from '#models/order'
import settings from '#settings/settings_service'
import { RpcPool } from '#chains/rpc_pool'
import { resetEndpointCapabilities } from '#plugins/tron/tron_endpoints'
import { Decimal } from '#support/text/money'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import type { FakeTronGrid } from '#tests/helpers/tron/fake_trongrid'
import { newTronAccount, type TronAccount } from '#tests/helpers/tron/tron_transactions'

/** The seeded mainnet contracts of the `tron` network (served by the fake). */
export const USDT_CONTRACT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'
export const USDC_CONTRACT = 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8'

export type TronTestNetwork = { wallet: string; payer: TronAccount }

/**
 * Points the seeded `tron` network at the fake TronGrid (after
 * resetDatabase), with one fresh receiving wallet, rates for USDT
 * (7.25 CNY) and TRX (2 CNY), and callbacks allowed to 127.0.0.1.
 */
export async function prepareTronNetwork(
  fake: FakeTronGrid,
  options: { confirmations?: number; rpcUrls?: string[] } = {}
): Promise<TronTestNetwork> {
  RpcPool.reset()
  resetEndpointCapabilities()
  fake.reset()
  fake.registerToken(USDT_CONTRACT, { symbol: 'USDT', name: 'Tether USD', decimals: 6 })
  fake.registerToken(USDC_CONTRACT, { symbol: 'USDC', name: 'USD Coin', decimals: 6 })
  await chainAdmin.set('tron', {
    rpcUrls: options.rpcUrls ?? [fake.url],
    confirmations: options.confirmations ?? 19,
    apiKey: '',
  })
  const wallet = newTronAccount().address
  await walletAdmin.add('tron', wallet)
  await rateAdmin.set('USDT', 'CNY', '7.25')
  await rateAdmin.set('TRX', 'CNY', '2')
  await settings.set('callbacks.allow_private_targets', 'true')
  await settings.set('rate_limit.create_per_minute', '0')
  await settings.set('rate_limit.cashier_per_minute', '0')
  return { wallet, payer: newTronAccount() }
}

/** Creates a TRON order over HTTP (100 CNY by default) and returns its model. */
export async function newTronOrder(
  client: ApiClient,
  overrides: Record<string, unknown> = {}
): Promise<Order> {
  const response = await createOrder(
    client,
    orderParams({ network: 'tron', token: 'usdt', ...overrides })
  )
  if (response.status() !== 200 || response.body().status_code !== 200) {
    throw new Error(`create failed: ${JSON.stringify(response.body())}`)
  }
  return Order.findByOrFail('trade_id', response.body().data.trade_id)
}

/** Token units → base units (6 decimals for USDT, USDC and TRX). */
export function baseUnits(amount: string | number, decimals = 6): bigint {
  return BigInt(new Decimal(String(amount)).shiftedBy(decimals).toFixed(0))
}
