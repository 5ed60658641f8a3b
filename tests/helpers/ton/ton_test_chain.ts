import {
  Blockchain,
  internal,
  type BlockchainTransaction,
  type SandboxContract,
  type SendMessageResult,
  type TreasuryContract,
} from '@ton/sandbox'
import { Address, beginCell, contractAddress, toNano, type Cell } from '@ton/core'
import { randomBytes } from 'node:crypto'
import {
  contractCode,
  jettonMinterInit,
  jettonTransferBody,
  mintBody,
  notificationBody,
} from '#tests/helpers/ton/ton_contracts'

export type Treasury = SandboxContract<TreasuryContract>

/**
 * A @ton/sandbox blockchain plus the history of every transaction our
 * sends produced (what the fake toncenter serves): payers are sandbox
 * treasuries, jettons our own TEP-74 minter and wallet.
 */
export class TonTestChain {
  readonly transactions: BlockchainTransaction[] = []

  private constructor(readonly blockchain: Blockchain) {}

  static async create() {
    return new TonTestChain(await Blockchain.create())
  }

  #record(result: SendMessageResult) {
    this.transactions.push(...result.transactions)
    return result
  }

  /** Transactions of `account`, newest first (toncenter's order). */
  transactionsOf(account: Address) {
    return this.transactions
      .filter((transaction) => {
        const dest = transaction.inMessage?.info.dest
        return Address.isAddress(dest) && dest.equals(account)
      })
      .sort((a, b) => (a.lt === b.lt ? 0 : a.lt > b.lt ? -1 : 1))
  }

  /**
   * A deployed wallet holding a million TON. Its deployment is recorded
   * like any transaction (the fake toncenter lists it, and the account's
   * state names it as its last), an hour back so that scans starting now
   * leave it behind.
   */
  async treasury(name: string): Promise<Treasury> {
    const wallet = await this.blockchain.treasury(name, { predeploy: false })
    const contract = await this.blockchain.getContract(wallet.address)
    if (contract.accountState?.type !== 'active') {
      const now = this.blockchain.now
      this.blockchain.now = Math.floor(Date.now() / 1000) - 3600
      try {
        const from = new Address(0, Buffer.alloc(32))
        const deploy = internal({
          from,
          to: wallet.address,
          value: toNano('1'),
          stateInit: wallet.init,
        })
        this.#record(await this.blockchain.sendMessage(deploy))
      } finally {
        this.blockchain.now = now
      }
    }
    return wallet
  }

  /** An address nobody deployed (a fresh receiving wallet). */
  undeployedAddress() {
    return new Address(0, randomBytes(32))
  }

  async deployJetton(admin: Treasury, name: string): Promise<Address> {
    const init = await jettonMinterInit(admin.address, name)
    const master = contractAddress(0, init)
    this.#record(
      await admin.send({ to: master, value: toNano('0.5'), init, body: beginCell().endCell() })
    )
    return master
  }

  async mint(admin: Treasury, master: Address, owner: Address, units: bigint) {
    this.#record(
      await admin.send({ to: master, value: toNano('0.3'), body: mintBody(owner, units) })
    )
  }

  async jettonWalletOf(master: Address, owner: Address): Promise<Address> {
    const result = await this.blockchain.runGetMethod(master, 'get_wallet_address', [
      { type: 'slice', cell: beginCell().storeAddress(owner).endCell() },
    ])
    return result.stackReader.readAddress()
  }

  async jettonBalance(master: Address, owner: Address): Promise<bigint> {
    const result = await this.blockchain.runGetMethod(
      await this.jettonWalletOf(master, owner),
      'get_wallet_data'
    )
    return result.stackReader.readBigNumber()
  }

  /** The transaction on `to` that `result` produced (the last one when several). */
  #transactionOn(result: SendMessageResult, to: Address) {
    const found = result.transactions.filter((transaction) => {
      const dest = transaction.inMessage?.info.dest
      return Address.isAddress(dest) && dest.equals(to)
    })
    return found.at(-1)
  }

  /**
   * The payer's TEP-74 transfer; returns the transaction on `to` the
   * notification made (none with `forwardTonAmount: 0n`: the jetton wallet
   * then notifies nobody) and the transaction of `to`'s jetton wallet that
   * received the internal_transfer.
   */
  async payJetton(
    payer: Treasury,
    master: Address,
    to: Address,
    units: bigint,
    options: { forwardTonAmount?: bigint; comment?: string } = {}
  ) {
    const payerWallet = await this.jettonWalletOf(master, payer.address)
    const result = this.#record(
      await payer.send({
        to: payerWallet,
        value: toNano('0.2'),
        body: jettonTransferBody({
          amount: units,
          destination: to,
          response: payer.address,
          forwardTonAmount: options.forwardTonAmount ?? toNano('0.01'),
          comment: options.comment,
        }),
      })
    )
    const jettonWallet = await this.jettonWalletOf(master, to)
    return {
      result,
      transaction: this.#transactionOn(result, to),
      jettonWallet,
      jettonTransaction: this.#transactionOn(result, jettonWallet)!,
    }
  }

  async payTon(
    payer: Treasury,
    to: Address,
    nanotons: bigint,
    options: { bounce?: boolean; body?: Cell } = {}
  ) {
    const result = this.#record(
      await payer.send({ to, value: nanotons, bounce: options.bounce ?? false, body: options.body })
    )
    return { result, transaction: this.#transactionOn(result, to)! }
  }

  /** A transfer_notification sent by a plain wallet, claiming `units` of a jetton. */
  async forgeNotification(forger: Treasury, to: Address, units: bigint) {
    const result = this.#record(
      await forger.send({
        to,
        value: toNano('0.05'),
        bounce: false,
        body: notificationBody(units, forger.address),
      })
    )
    return { result, transaction: this.#transactionOn(result, to)! }
  }

  /** Deploys a contract that fails on every message with a body. */
  async deployRejectingReceiver(deployer: Treasury): Promise<Address> {
    const code = await contractCode('rejecting_receiver.fc')
    const init = { code, data: beginCell().storeBuffer(randomBytes(8)).endCell() }
    const address = contractAddress(0, init)
    this.#record(await deployer.send({ to: address, value: toNano('1'), init, bounce: false }))
    return address
  }
}

/** The canonical reference of a transaction, written from the format's description. */
export function tonReference(transaction: BlockchainTransaction, account: Address) {
  return `ton:0:${account.hash.toString('hex')}:${transaction.lt}:${transaction.hash().toString('hex')}`
}
