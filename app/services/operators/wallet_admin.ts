import { inject } from '@adonisjs/core'
import Wallet from '#models/wallet'
import AmountLock from '#models/amount_lock'
import chainRegistry from '#chains/chain_registry'
import { OperatorError } from '#support/operator_error'
import { isUniqueViolation } from '#support/database_errors'
import { ChainAdmin } from '#services/operators/chain_admin'
import { AuditLog } from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'

/**
 * Receiving wallets as operators manage them (ace commands today, the
 * admin console later): addresses are checked and normalised by the
 * network's family, and a refusal is an OperatorError whose message is
 * meant for the operator.
 */
@inject()
export class WalletAdmin {
  constructor(
    protected chains: ChainAdmin,
    protected audit: AuditLog
  ) {}

  list(network?: string) {
    const query = Wallet.query().orderBy('network').orderBy('id')
    if (network) query.where('network', network.toLowerCase())
    return query
  }

  async add(network: string, address: string) {
    const chain = await this.chains.find(network)
    const normalized = chainRegistry.family(chain.family).normalizeAddress(address)
    try {
      return await this.audit.change(
        (trx) => Wallet.create({ network: chain.network, address: normalized, enabled: true, note: '' }, { client: trx }),
        (wallet) => ({
          action: 'wallet.add',
          subjectType: 'wallet',
          subjectId: `${wallet.network}/${wallet.address}`,
          after: snapshot.wallet(wallet),
        })
      )
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new OperatorError(`Wallet address already exists (10001): ${normalized} on ${chain.network}`)
      }
      throw error
    }
  }

  /**
   * Removes a wallet. Refused while orders still wait for a payment to it
   * (their payments would no longer be watched) unless `force` is given.
   */
  async remove(network: string, address: string, force = false) {
    const chain = await this.chains.find(network)
    let normalized = address.trim()
    try {
      normalized = chainRegistry.family(chain.family).normalizeAddress(address)
    } catch {
      // a malformed address cannot be stored either: reported as not found
    }
    const wallet = await Wallet.query().where('network', chain.network).where('address', normalized).first()
    if (!wallet) throw new OperatorError(`No wallet ${address} on ${chain.network}`)
    const waiting = await AmountLock.query()
      .where('network', chain.network)
      .where('address', wallet.address)
      .count('* as total')
    const count = Number(waiting[0].$extras.total)
    if (count > 0 && !force) {
      throw new OperatorError(
        `${count} order(s) still wait for a payment to ${wallet.address}; let them expire first, or use --force`
      )
    }
    const before = snapshot.wallet(wallet)
    await this.audit.change(
      async (trx) => {
        wallet.useTransaction(trx)
        await wallet.delete()
      },
      () => ({
        action: force && count > 0 ? 'wallet.remove_forced' : 'wallet.remove',
        subjectType: 'wallet',
        subjectId: `${wallet.network}/${wallet.address}`,
        before,
        after: null,
      })
    )
    return wallet
  }
}
