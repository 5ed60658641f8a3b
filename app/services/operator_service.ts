import app from '@adonisjs/core/services/app'
import { ApiKeyAdmin, type ApiKeyChanges, type NewApiKey } from '#services/operators/api_key_admin'
import { ChainAdmin, type ChainChanges, type TokenChanges } from '#services/operators/chain_admin'
import { WalletAdmin, type WalletChanges } from '#services/operators/wallet_admin'
import { RateAdmin } from '#services/operators/rate_admin'

/**
 * One object over the four operator services (app/services/operators),
 * for the test helpers and scripts that set a gateway up in a few lines.
 * Each call resolves its service from the container, so a service swapped
 * there (container.swap) is the one used here too. Commands and the admin
 * console use the services themselves.
 */
export class OperatorService {
  createApiKey(input: NewApiKey) {
    return this.#make(ApiKeyAdmin).then((admin) => admin.create(input))
  }

  apiKey(pid: string) {
    return this.#make(ApiKeyAdmin).then((admin) => admin.find(pid))
  }

  rotateApiKey(pid: string, secret?: string) {
    return this.#make(ApiKeyAdmin).then((admin) => admin.rotate(pid, secret))
  }

  updateApiKey(pid: string, changes: ApiKeyChanges) {
    return this.#make(ApiKeyAdmin).then((admin) => admin.update(pid, changes))
  }

  chain(network: string) {
    return this.#make(ChainAdmin).then((admin) => admin.find(network))
  }

  setChain(network: string, changes: ChainChanges) {
    return this.#make(ChainAdmin).then((admin) => admin.set(network, changes))
  }

  setToken(network: string, symbol: string, changes: TokenChanges) {
    return this.#make(ChainAdmin).then((admin) => admin.setToken(network, symbol, changes))
  }

  addWallet(network: string, address: string) {
    return this.#make(WalletAdmin).then((admin) => admin.add(network, address))
  }

  updateWallet(network: string, address: string, changes: WalletChanges) {
    return this.#make(WalletAdmin).then((admin) => admin.update(network, address, changes))
  }

  removeWallet(network: string, address: string, force = false) {
    return this.#make(WalletAdmin).then((admin) => admin.remove(network, address, force))
  }

  setRate(token: string, fiat: string, rate: string) {
    return this.#make(RateAdmin).then((admin) => admin.set(token, fiat, rate))
  }

  #make<T>(service: new (...args: any[]) => T): Promise<T> {
    return app.container.make(service)
  }
}

const operatorService = new OperatorService()
export default operatorService
