import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import { getAddress } from 'viem'
import type { ApiClient } from '@japa/api-client'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import settings from '#settings/settings_service'
import { RpcPool } from '#chains/rpc_pool'
import type { Anvil } from '#tests/helpers/evm/anvil'
import { RpcProxy } from '#tests/helpers/evm/rpc_proxy'
import Order from '#models/order'
import chainScanner from '#services/chain_scanner'
import { createOrder, orderParams } from '#tests/helpers/merchant'

export type EvmFixture = { usdt: `0x${string}`; usdc: `0x${string}`; wallet: `0x${string}` }

export function randomAddress(): `0x${string}` {
  return privateKeyToAccount(generatePrivateKey()).address
}

/** Test tokens deployed once per node. */
export async function deployTokens(anvil: Anvil) {
  return {
    usdt: getAddress(await anvil.deployToken('USDT', 6)),
    usdc: getAddress(await anvil.deployToken('USDC', 6)),
  }
}

/**
 * Points the seeded `ethereum` network at the node (or `rpcUrls`): USDT and
 * USDC are the test tokens, one fresh receiving wallet, rates for USDT,
 * USDC and ETH, callbacks allowed to 127.0.0.1.
 */
export async function configureEthereum(
  tokens: { usdt: `0x${string}`; usdc: `0x${string}` },
  rpcUrls: string[],
  confirmations = 3
): Promise<EvmFixture> {
  RpcPool.reset()
  await chainAdmin.set('ethereum', { rpcUrls, confirmations, enabled: true })
  await chainAdmin.setToken('ethereum', 'USDT', {
    contract: tokens.usdt,
    decimals: 6,
    precision: 2,
  })
  await chainAdmin.setToken('ethereum', 'USDC', {
    contract: tokens.usdc,
    decimals: 6,
    precision: 2,
  })
  const wallet = randomAddress()
  await walletAdmin.add('ethereum', wallet)
  await rateAdmin.set('USDT', 'CNY', '7.25')
  await rateAdmin.set('USDC', 'CNY', '7.25')
  await rateAdmin.set('ETH', 'CNY', '20000')
  await settings.set('callbacks.allow_private_targets', 'true')
  await settings.set('rate_limit.create_per_minute', '0')
  await settings.set('rate_limit.cashier_per_minute', '0')
  return { ...tokens, wallet }
}

/** A native order on `ethereum` (USDT unless overridden), as stored. */
export async function createEthOrder(client: ApiClient, overrides: Record<string, unknown> = {}) {
  const response = await createOrder(
    client,
    orderParams({ network: 'ethereum', token: 'usdt', ...overrides })
  )
  if (response.status() !== 200) throw new Error(JSON.stringify(response.body()))
  return Order.findByOrFail('trade_id', response.body().data.trade_id)
}

/**
 * One scan of `ethereum`. A scan that failed, did not run (busy, nothing to
 * watch) or was interrupted fails the test with its reason, instead of
 * reading as "nothing found" at the test's next assertion.
 */
export async function scanEthereum() {
  const [report] = await chainScanner.scan({ network: 'ethereum' })
  if (!report.scanned || report.interrupted) throw new Error(`scan of ethereum: ${report.detail}`)
  return report
}

/**
 * Starts `anvil` for a test group, deploys the test tokens and puts a
 * counting (and, on demand, limiting) JSON-RPC proxy in front of it;
 * `stop` ends both (the group's teardown).
 */
export async function startNodeBehindProxy(anvil: Anvil) {
  await anvil.start()
  const tokens = await deployTokens(anvil)
  const proxy = await new RpcProxy(anvil.url).start()
  const stop = async () => {
    await proxy.stop()
    await anvil.stop()
  }
  return { tokens, proxy, stop }
}
