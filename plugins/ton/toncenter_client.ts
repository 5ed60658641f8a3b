import { TonClient } from '@ton/ton'
import { Address, beginCell, type Transaction } from '@ton/core'
import type Chain from '#models/chain'
import type { RpcPool } from '#chains/rpc_pool'

/** A transaction id as kept in cursors: logical time and lower-case hex hash. */
export type TransactionPoint = { lt: string; hash: string }

/** Answers toncenter (tonlib / liteserver) gives for a transaction id it does not know. */
const UNKNOWN_TRANSACTION =
  /cannot locate transaction|lt not in db|not in db|hash mismatch|cannot compute block|transaction not found/i

function isUnknownTransactionAnswer(error: unknown): boolean {
  const data = (error as { response?: { data?: { error?: unknown } } })?.response?.data
  return typeof data?.error === 'string' && UNKNOWN_TRANSACTION.test(data.error)
}

/** Jetton wallet addresses never change for a master: kept for the process. */
const jettonWallets = new Map<string, Address>()
const clients = new Map<string, TonClient>()

/**
 * The toncenter v2 `jsonRPC` calls this plugin makes, through the real
 * @ton/ton TonClient, on one endpoint. Calls go through `withToncenter` so
 * that the chain's RPC pool fails over between endpoints.
 */
export class ToncenterClient {
  constructor(private readonly client: TonClient) {}

  static for(endpoint: string, apiKey: string, timeoutMs: number) {
    const key = `${endpoint}\n${apiKey}\n${timeoutMs}`
    let client = clients.get(key)
    if (!client) {
      client = new TonClient({ endpoint, apiKey: apiKey || undefined, timeout: timeoutMs })
      clients.set(key, client)
    }
    return new ToncenterClient(client)
  }

  /**
   * Up to `limit` transactions of `account`, newest first, older than
   * `before` when given (exclusive), newer than `afterLt` when given.
   */
  transactions(account: Address, options: { limit: number; before?: TransactionPoint; afterLt?: bigint }) {
    return this.client.getTransactions(account, {
      limit: options.limit,
      lt: options.before?.lt,
      hash: options.before ? Buffer.from(options.before.hash, 'hex').toString('base64') : undefined,
      inclusive: false,
      to_lt: options.afterLt && options.afterLt > 0n ? options.afterLt.toString() : undefined,
      archival: true,
    })
  }

  /** One transaction of `account`, or null when the node does not know it. */
  async transaction(account: Address, lt: bigint, hashHex: string): Promise<Transaction | null> {
    let found: Transaction[]
    try {
      found = await this.client.getTransactions(account, {
        limit: 1,
        lt: lt.toString(),
        hash: Buffer.from(hashHex, 'hex').toString('base64'),
        inclusive: true,
        archival: true,
      })
    } catch (error) {
      if (isUnknownTransactionAnswer(error)) return null
      throw error
    }
    const transaction = found[0]
    if (!transaction || transaction.lt !== lt || transaction.hash().toString('hex') !== hashHex) return null
    return transaction
  }

  /** The jetton wallet of `owner` for the jetton of `master` (get_wallet_address). */
  async jettonWallet(master: Address, owner: Address): Promise<Address> {
    const key = `${master.toRawString()}|${owner.toRawString()}`
    const known = jettonWallets.get(key)
    if (known) return known
    const { stack } = await this.client.runMethod(master, 'get_wallet_address', [
      { type: 'slice', cell: beginCell().storeAddress(owner).endCell() },
    ])
    const wallet = stack.readAddress()
    jettonWallets.set(key, wallet)
    return wallet
  }
}

/** Runs `work` on the chain's endpoints with failover (RpcPool). */
export function withToncenter<T>(
  context: { chain: Chain; rpc: RpcPool },
  work: (client: ToncenterClient) => Promise<T>
): Promise<T> {
  return context.rpc.call((url) => work(ToncenterClient.for(url, context.rpc.apiKey, context.rpc.timeoutMs)))
}
