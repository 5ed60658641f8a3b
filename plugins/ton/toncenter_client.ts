import { TonClient } from '@ton/ton'
import { type Address, beginCell, Cell, loadTransaction, type Transaction } from '@ton/core'
import type Chain from '#models/chain'
import type { RpcPool } from '#chains/rpc_pool'
import { TransferLookupError } from '#chains/chain_family'
import { permittedAdapter, ToncenterHttpError, type HttpAdapter } from '#plugins/ton/toncenter_http'

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
    return {
      point,
      now: raw.utime,
      transaction: loadTransaction(Cell.fromBase64(raw.data).beginParse()),
    }
  } catch (error) {
    const unreadable = `transaction data unreadable: ${(error as Error).message}`
    return { point, now: raw.utime, transaction: null, unreadable }
  }
}

/**
 * An account's state as toncenter read it: its balance and the id of its
 * last transaction (lt 0 when it has none). The balance is the one after
 * that transaction: nothing changes an account's balance but its own
 * transactions.
 */
export type AccountState = { balance: bigint; lastLt: bigint }

/** tonlib's exit code for a get method run on an account without code (not deployed). */
export const EXIT_CODE_NOT_INITIALIZED = -13

type Connection = { endpoint: string; apiKey?: string; timeout: number; httpAdapter: HttpAdapter }

/** The @ton/ton client with its raw API reachable (transactions are parsed one by one here). */
class PermittedTonClient extends TonClient {
  constructor(private readonly connection: Connection) {
    super(connection)
  }

  get raw() {
    return this.api
  }

  /**
   * One jsonRPC call, its whole `result` returned: the client's own
   * decoders drop the fields they do not know (runGetMethod's
   * last_transaction_id among them). Same transport, so the same permits.
   */
  async call(method: string, params: Record<string, unknown>): Promise<unknown> {
    const { endpoint, apiKey, timeout, httpAdapter } = this.connection
    const response = await httpAdapter({
      url: endpoint,
      method: 'post',
      headers: { 'Content-Type': 'application/json', ...(apiKey ? { 'X-API-Key': apiKey } : {}) },
      data: JSON.stringify({ id: '1', jsonrpc: '2.0', method, params }),
      timeout,
    } as Parameters<HttpAdapter>[0])
    const body = response.data as { ok?: unknown; result?: unknown } | null
    if (body?.ok !== true) throw new Error(`Received error: ${JSON.stringify(body)}`)
    return body.result
  }
}

/** A TVM number as toncenter writes it in a stack: `["num", "0x1f"]` (negative: `-0x1f`). */
function stackNumber(entry: unknown): bigint | null {
  if (!Array.isArray(entry) || entry[0] !== 'num' || typeof entry[1] !== 'string') return null
  const match = /^(-?)0x([0-9a-fA-F]+)$/.exec(entry[1])
  if (!match) return null
  const value = BigInt(`0x${match[2]}`)
  return match[1] ? -value : value
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
  async transaction(
    account: Address,
    lt: bigint,
    hashHex: string
  ): Promise<ListedTransaction | null> {
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
  async resultTransaction(
    source: Address,
    destination: Address,
    createdLt: bigint
  ): Promise<ListedTransaction | null> {
    try {
      return listed(
        await this.client.raw.tryLocateResultTx(source, destination, createdLt.toString())
      )
    } catch (error) {
      if (isUnknownTransactionAnswer(error)) return null
      throw error
    }
  }

  /**
   * The account's balance in nanotons and its last transaction
   * (getAddressInformation). toncenter says `balance: 0` (a number) or
   * `"-1"` for an account that never existed, depending on its version.
   */
  async accountState(account: Address): Promise<AccountState> {
    const info = await this.client.raw.getAddressInformation(account)
    const balance = BigInt(info.balance)
    return { balance: balance < 0n ? 0n : balance, lastLt: BigInt(info.last_transaction_id.lt) }
  }

  /**
   * A jetton wallet's balance in base units (its get_wallet_data), with
   * the last transaction of the state the method ran on: toncenter's
   * runGetMethod answers with the `last_transaction_id` of that very state,
   * so the balance and its place in the account's history come from one
   * read. A wallet not deployed yet (exit code -13, or no transaction at
   * all) holds nothing. Throws TransferLookupError when the answer cannot
   * be placed or is no jetton wallet's.
   */
  async jettonWalletState(wallet: Address): Promise<AccountState> {
    const result = (await this.client.call('runGetMethod', {
      address: wallet.toString(),
      method: 'get_wallet_data',
      stack: [],
    })) as { exit_code?: unknown; stack?: unknown; last_transaction_id?: { lt?: unknown } } | null
    const lt = result?.last_transaction_id?.lt
    if (typeof lt !== 'string' || !/^\d+$/.test(lt)) {
      throw new TransferLookupError(
        `the endpoint's runGetMethod answer for ${wallet.toString()} has no last_transaction_id: its jetton balance cannot be placed`
      )
    }
    const lastLt = BigInt(lt)
    if (
      result!.exit_code === EXIT_CODE_NOT_INITIALIZED ||
      (result!.exit_code !== 0 && lastLt === 0n)
    ) {
      return { balance: 0n, lastLt }
    }
    if (result!.exit_code !== 0) {
      throw new TransferLookupError(
        `${wallet.toString()} answered get_wallet_data with exit code ${String(result!.exit_code)}`
      )
    }
    const balance = Array.isArray(result!.stack) ? stackNumber(result!.stack[0]) : null
    if (balance === null || balance < 0n) {
      throw new TransferLookupError(
        `${wallet.toString()} answered get_wallet_data without a balance`
      )
    }
    return { balance, lastLt }
  }

  /** Seqno of the last masterchain block the endpoint knows. */
  async masterchainSeqno(): Promise<number> {
    const { latestSeqno } = await this.client.getMasterchainInfo()
    return latestSeqno
  }

  /** The jetton wallet of `owner` for the jetton of `master` (get_wallet_address). */
  async jettonWallet(master: Address, owner: Address): Promise<Address> {
    const key = jettonWalletKey(master, owner)
    const known = jettonWallets.get(key)
    if (known) return known
    const { stack, exit_code: exitCode } = await this.client.runMethodWithError(
      master,
      'get_wallet_address',
      [{ type: 'slice', cell: beginCell().storeAddress(owner).endCell() }]
    )
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
