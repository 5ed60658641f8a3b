import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import { TRON_WALLET } from '#tests/helpers/merchant'

/** A payable TRON USDT at 1 USDT = 7.25 CNY, one wallet. */
export async function makeTronPayable(wallets: string[] = [TRON_WALLET]) {
  for (const wallet of wallets) await walletAdmin.add('tron', wallet)
  await rateAdmin.set('USDT', 'CNY', '7.25')
}
