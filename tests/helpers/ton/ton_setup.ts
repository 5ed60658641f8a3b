import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import type { Address } from '@ton/core'
import settings from '#settings/settings_service'
import { RpcPool } from '#chains/rpc_pool'
import { FakeToncenter } from '#tests/helpers/ton/fake_toncenter'
import { TonTestChain, type Treasury } from '#tests/helpers/ton/ton_test_chain'

export type TonFixture = {
  chain: TonTestChain
  toncenter: FakeToncenter
  admin: Treasury
  payer: Treasury
  /** Our test jetton, configured as the network's USDT. */
  usdt: Address
  /** Another jetton of the same code: what a scammer's "USDT" is. */
  fakeUsdt: Address
}

/** A sandbox with two jettons, a funded payer, and the fake toncenter in front of it. */
export async function startTonFixture(): Promise<TonFixture> {
  const chain = await TonTestChain.create()
  const toncenter = new FakeToncenter(chain)
  await toncenter.start()
  const admin = await chain.treasury('jetton-admin')
  const payer = await chain.treasury('payer')
  const usdt = await chain.deployJetton(admin, 'Tether USD (test)')
  const fakeUsdt = await chain.deployJetton(admin, 'Tether USD (fake)')
  await chain.mint(admin, usdt, payer.address, 1_000_000_000n)
  await chain.mint(admin, fakeUsdt, payer.address, 1_000_000_000n)
  return { chain, toncenter, admin, payer, usdt, fakeUsdt }
}

/** Stored form of a receiving wallet (user-friendly, URL-safe, non-bounceable). */
export function storedWallet(address: Address) {
  return address.toString({ urlSafe: true, bounceable: false })
}

/**
 * The seeded `ton` network pointed at the fake toncenter, USDT at our
 * jetton, `wallets` as receiving wallets; 1 USDT = 7.25 CNY, 1 TON = 20 CNY;
 * callbacks allowed to 127.0.0.1.
 */
export async function configureTon(
  fixture: TonFixture,
  wallets: Address[],
  options: { rpcUrls?: string[]; apiKey?: string } = {}
) {
  RpcPool.reset()
  fixture.toncenter.reset()
  await chainAdmin.set('ton', {
    rpcUrls: options.rpcUrls ?? [fixture.toncenter.rpcUrl],
    confirmations: 1,
    // A key by default: toncenter allows 10 requests/s with one, 1/s without (tests of the keyless limit pass '').
    apiKey: options.apiKey ?? 'ton-test-key',
  })
  await chainAdmin.setToken('ton', 'USDT', { contract: fixture.usdt.toString(), decimals: 6 })
  for (const wallet of wallets) await walletAdmin.add('ton', wallet.toRawString())
  await rateAdmin.set('USDT', 'CNY', '7.25')
  await rateAdmin.set('TON', 'CNY', '20')
  await settings.set('callbacks.allow_private_targets', 'true')
  await settings.set('rate_limit.create_per_minute', '0')
  await settings.set('rate_limit.cashier_per_minute', '0')
}

/** A decimal amount in base units ("13.8", 6 → 13800000n), without floats. */
export function baseUnits(amount: string, decimals: number): bigint {
  const [whole, fraction = ''] = amount.split('.')
  return BigInt(whole + fraction.padEnd(decimals, '0'))
}
