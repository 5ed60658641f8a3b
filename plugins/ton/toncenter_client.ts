import { TonClient } from '@ton/ton'
import { Address, beginCell, Cell, loadTransaction, type Transaction } from '@ton/core'
import type Chain from '#models/chain'
import type { RpcPool } from '#chains/rpc_pool'
import { TransferLookupError } from '#chains/chain_family'
import { permittedAdapter, ToncenterHttpError } from '#plugins/ton/toncenter_http'

/** A transaction id as kept in cursors: logical time and lower-case hex hash. */
export type TransactionPoint = { lt: string; hash: string }

/**
 * A transaction as toncenter listed it: its id and time always, the parsed
 * transaction when its BOC could be read, else why not (such a transaction
 * is reported, never skipped).
 */
export type ListedTransaction = {
  point: TransactionPoint
  /** Block time, unix seconds. */
  now: number
  transaction: Transaction | null
  unreadable?: string
}

/** Answers toncenter (tonlib / liteserver) gives for a transaction id it does not know. */
const UNKNOWN_TRANSACTION = new RegExp(
  'cannot locate transaction|lt not in db|not in db|hash mismatch|cannot compute block|transaction not found|failed to locate',
  'i'
)

function isUnknownTransactionAnswer(error: unknown): boolean {
  return error instanceof ToncenterHttpError && UNKNOWN_TRANSACTION.test(error.reason)
}

type RawTransaction = { data: string; utime: number; transaction_id: { lt: string; hash: string } }

function hexHash(base64: string): string {
  return Buffer.from(base64, 'base64').toString('hex')
}

function listed(raw: RawTransaction): ListedTransaction {
  const point = { lt: raw.transaction_id.lt, hash: hexHash(raw.transaction_id.hash) }
  try {
    return { point, now: raw.utime, transaction: loadTransaction(Cell.fromBase64(raw.data).beginParse()) }
  } catch (error) {
    const unreadable = `transaction data unreadable: ${(error as Error).message}`
    return { point, now: raw.utime, transaction: null, unreadable }
  }
}

/** The @ton/ton client with its raw API reachable (transactions are parsed one by one here). */
class PermittedTonClient extends TonClient {
  get raw() {
    return this.api
  }
}

/** Jetton wallet addresses never change for a master: kept for the process (successes only). */
const jettonWallets = new Map<string, Address>()
/** One client per pool and endpoint: the client's transport asks that pool for permits. */
const clients = new WeakMap<RpcPool, Map<string, PermittedTonClient>>()

/**
 * The toncenter v2 `jsonRPC` calls this plugin makes, through the real
 * @ton/ton TonClient, on one endpoint. Each method sends one HTTP request
 * (the pool may retry a call as a whole). Calls go through `withToncenter`
 * so that the chain's RPC pool paces them and fails over between endpoints.
 */
export class ToncenterClient {
  constructor(private readonly client: PermittedTonClient) {}

  static for(pool: RpcPool, endpoint: string) {
    let byUrl = clients.get(pool)
    if (!byUrl) clients.set(pool, (byUrl = new Map()))
    let client = byUrl.get(endpoint)
    if (!client) {
      client = new PermittedTonClient({
        endpoint,
        apiKey: pool.apiKey || undefined,
        timeout: pool.timeoutMs,
        httpAdapter: permittedAdapter(pool, endpoint),
      })
      byUrl.set(endpoint, client)
    }
    return new ToncenterClient(client)
  }

  /**
   * Up to `limit` transactions of `account`, newest first, older than
   * `before` when given (exclusive), newer than `afterLt` when given.
   */
  async transactions(
    account: Address,
    options: { limit: number; before?: TransactionPoint; afterLt?: bigint }
  ): Promise<ListedTransaction[]> {
    const page = await this.client.raw.getTransactions(account, {
      limit: options.limit,
      lt: options.before?.lt,
      hash: options.before ? Buffer.from(options.before.hash, 'hex').toString('base64') : undefined,
      inclusive: false,
      to_lt: options.afterLt && options.afterLt > 0n ? options.afterLt.toString() : undefined,
      archival: true,
    })
    return page.map(listed)
  }

  /** One transaction of `account`, or null when the node does not know it. */
  async transaction(account: Address, lt: bigint, hashHex: string): Promise<ListedTransaction | null> {
    let found: RawTransaction[]
    try {
      found = await this.client.raw.getTransactions(account, {
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
    const entry = found[0] ? listed(found[0]) : null
    if (!entry || entry.point.lt !== lt.toString() || entry.point.hash !== hashHex) return null
    return entry
  }

  /**
   * The transaction of `destination` that processed the message `source`
   * created at `createdLt` (toncenter's tryLocateResultTx), or null when
   * it is not (yet) on chain.
   */
  async resultTransaction(source: Address, destination: Address, createdLt: bigint): Promise<ListedTransaction | null> {
    try {
      return listed(await this.client.raw.tryLocateResultTx(source, destination, createdLt.toString()))
    } catch (error) {
      if (isUnknownTransactionAnswer(error)) return null
      throw error
    }
  }

  /** Seqno of the last masterchain block the endpoint knows. */
  async masterchainSeqno(): Promise<number> {
    return (await this.client.getMasterchainInfo()).latestSeqno
  }

  /** The jetton wallet of `owner` for the jetton of `master` (get_wallet_address). */
  async jettonWallet(master: Address, owner: Address): Promise<Address> {
    const key = jettonWalletKey(master, owner)
    const known = jettonWallets.get(key)
    if (known) return known
    const { stack, exit_code: exitCode } = await this.client.runMethodWithError(master, 'get_wallet_address', [
      { type: 'slice', cell: beginCell().storeAddress(owner).endCell() },
    ])
    // An answer, not an outage: the endpoint is not cooled down for a token set with a wrong contract.
    if (exitCode !== 0) {
      throw new TransferLookupError(
        `the jetton master ${master.toString()} answered get_wallet_address with exit code ${exitCode}: is it a jetton master?`
      )
    }
    const wallet = stack.readAddress()
    jettonWallets.set(key, wallet)
    return wallet
  }
}

function jettonWalletKey(master: Address, owner: Address) {
  return `${master.toRawString()}|${owner.toRawString()}`
}

/** The jetton wallet of `owner` when this process already knows it (no request). */
export function knownJettonWallet(master: Address, owner: Address): Address | null {
  return jettonWallets.get(jettonWalletKey(master, owner)) ?? null
}

/** Runs `work` on the chain's endpoints with pacing and failover (RpcPool). */
export function withToncenter<T>(
  context: { chain: Chain; rpc: RpcPool },
  work: (client: ToncenterClient) => Promise<T>
): Promise<T> {
  return context.rpc.call((url) => work(ToncenterClient.for(context.rpc, url)))
}
