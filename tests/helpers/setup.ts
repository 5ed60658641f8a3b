import operator from '#services/operator_service'
import { TRON_WALLET } from '#tests/helpers/merchant'

/** A payable TRON USDT at 1 USDT = 7.25 CNY, one wallet. */
export async function makeTronPayable(wallets: string[] = [TRON_WALLET]) {
  for (const wallet of wallets) await operator.addWallet('tron', wallet)
  await operator.setRate('USDT', 'CNY', '7.25')
}
