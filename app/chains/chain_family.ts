import type Chain from '#models/chain'
import type Token from '#models/token'
import type Order from '#models/order'
import type { RpcBudget, RpcPool } from '#chains/rpc_pool'
import type { ReasonText } from '#support/cli/operator_error'

/**
 * What the core asks of a chain family plugin (one folder under plugins/,
 * registered through app/plugin_host/gateway_plugin.ts). The core itself
 * knows no chain.
 *
 * An address (or contract) the family refuses; the message says why, in
 * English. `reason`: the same in the plugin's texts (a key of its
 * lang/<locale>/admin.json `refusals`), so that the console says it in the
 * admin's language.
 */
export class InvalidAddressError extends Error {
  constructor(
    message: string,
    readonly reason?: ReasonText
  ) {
    super(message)
  }
}

/**
 * Block times have second precision and come from the producers' clocks: a
 * transfer may carry a time a little before the order it pays was created.
 */
export const BLOCK_TIME_SKEW_MS = 30_000

/** Family options (chains.options) that the family refuses; the message says why (`reason`: as above). */
export class InvalidOptionsError extends Error {
  constructor(
    message: string,
    readonly reason?: ReasonText
  ) {
    super(message)
  }
}

/** A plugin's refusal text: `plugins.<plugin>.admin.refusals.<key>` with its arguments. */
export function pluginReason(
  plugin: string,
  key: string,
  args: Record<string, string | number> = {}
): ReasonText {
  return { key: `plugins.${plugin}.admin.refusals.${key}`, args }
}

/** A reference that cannot be looked up (not found, malformed, node down). */
export class TransferLookupError extends Error {}

/**
 * Where a transfer sits in its block (chains with blocks): the scanner
 * keeps it with the payment, so that a reorganisation that replaces the
 * block is seen and the order flagged.
 */
export type TransferBlock = { number: string; hash: string }

/** One transfer a transaction made, as read from the chain. */
export type ObservedTransfer = {
  /** Canonical reference of the transaction (what block_transaction_id keeps). */
  reference: string
  /**
   * Which transfer of the transaction this is, in the family's own terms,
   * stable however often it is read, e.g. `log:<index>` (an event log
   * entry), `value` (the native value the transaction itself carries),
   * `trace:<path>` or `internal:<index>` (native value a contract sent, by
   * its call path or its internal transaction), `ix:<n>` or `ix:<n>.<m>`
   * (an instruction, inner ones by their parent), `in` (the transaction's
   * incoming message); each family's plugin documents its own. One
   * transaction may pay several orders, one transfer pays at most one
   * (10007).
   */
  position: string
  /** The block it was read from, when the chain has blocks that can be replaced. */
  block?: TransferBlock
  /** Recipient, in the form the family stores addresses. */
  to: string
  /** Token contract in stored form; null for the native coin. */
  contract: string | null
  /** Amount in token units, as a decimal string. */
  amount: string
  /** Block time, epoch milliseconds. */
  timestamp: number
  confirmations: number
  /** False when the transaction failed / reverted / bounced. */
  success: boolean
}

export type VerificationContext = { chain: Chain; tokens: Token[]; order: Order; rpc: RpcPool }

/**
 * An incoming amount a scan saw to a watched address in an enabled token,
 * for the balance watch's accounting: every successful incoming transfer,
 * confirmed or dropped as dust, with its height. Seeing one again in a
 * later run is harmless (counted once, by reference and position).
 */
export type SeenAmount = {
  reference: string
  position: string
  /** Watched address, stored form. */
  to: string
  /** Token contract in stored form; null for the native coin. */
  contract: string | null
  /** Token units, decimal string. */
  amount: string
  /**
   * Where on the chain it happened, as a decimal string in the numbering
   * the family uses for its balance readings (a block, a slot, a logical
   * time): the watch compares each reading with the amounts seen up to
   * its height.
   */
  height: string
}

/** The balance of one watched address in one enabled token, as of its `height` (else `ScanResult.balances.height`). */
export type BalanceReading = {
  address: string
  /** Token contract in stored form; null for the native coin. */
  contract: string | null
  /** Token units, decimal string. */
  amount: string
  /** This reading's own height, when the family's reads of one run stand at different heights; else the run's. */
  height?: string
}

/** What a scan works with. */
export type ScanContext = {
  chain: Chain
  /** Enabled tokens of the network (contract null: the native coin). */
  tokens: Token[]
  /**
   * Receiving addresses of the network to watch, in stored form: the
   * enabled ones, and disabled ones on which orders still hold a reservation.
   */
  addresses: string[]
  /** The cursor this family returned last time; null on the very first scan. */
  cursor: unknown
  /**
   * First scan only: where to start, as a time (epoch ms): the creation of
   * the oldest order still worth watching, or now.
   */
  startTime: number
  rpc: RpcPool
  /** Largest number of blocks one scan run covers. */
  maxBlocksPerScan: number
  /**
   * True when a transfer of `amount` (token units, decimal string) of the
   * token `contract` (null: the native coin) is below the smallest amount
   * any watched order of that token waits for: dust or address poisoning.
   * Families drop such transfers before any further RPC call and count
   * them in `ScanResult.dust`.
   */
  isDust?(contract: string | null, amount: string): boolean
  /**
   * The balance watch is due (one read per watched address and token per
   * `chains.balance_check_minutes`): a family that can read balances does,
   * once its scan is caught up, as of a height its `seen` amounts are
   * measured against (ScanResult.balances).
   */
  readBalances?: boolean
}

/** A transaction to a watched address the family could not read (kept as unmatched, with the reason). */
export type UnreadableTransfer = {
  reference: string
  /** Watched address it concerns, stored form. */
  to: string
  /** Token contract in stored form when known; null for the native coin or unknown. */
  contract: string | null
  /** Block time, epoch milliseconds (0 when unknown). */
  timestamp: number
  /** Why it could not be read, for the operator. */
  reason: string
}

export type ScanResult = {
  /**
   * Incoming transfers of the network's tokens to the watched addresses,
   * confirmed as deep as the chain's `confirmations` asks, found since the
   * cursor. Seeing one again later is harmless.
   */
  transfers: ObservedTransfer[]
  /**
   * Incoming transfers the family saw cheaply that are not yet as deep as
   * `confirmations` asks (the payer's page says "payment seen, n of m").
   * They never pay anything; the core only records them as sightings.
   * Undefined when the family did not look this run (it cannot, or the
   * scan is behind): the sightings recorded before are kept. An array,
   * even empty, is the whole unconfirmed picture: any earlier sighting
   * missing from it vanished (reorganisation) or became confirmed.
   */
  unconfirmed?: ObservedTransfer[]
  /** Cursor to persist (JSON-serialisable). */
  cursor: unknown
  /** False when more is left to scan right away (a bounded run stopped early). */
  caughtUp: boolean
  /**
   * Set when the run stopped midway (rate limit, endpoint outage): what was
   * processed is in `transfers` and `cursor` points just past it, so the
   * next run resumes there. The core records the text as the scan's error.
   */
  interrupted?: string
  /** Transactions to watched addresses that failed to parse: recorded as unmatched, never skipped. */
  unreadable?: UnreadableTransfer[]
  /** Transfers dropped by `isDust` this run. */
  dust?: number
  /**
   * Where the chain stood during this run, for the operator's view of the
   * lag (the console's scanner status), in the family's own block (slot…)
   * numbering, as decimal strings: `head` is the newest block the node
   * reported, `scanned` the newest one the returned cursor covers (left
   * out when the cursor covers no single block, e.g. some listings are
   * behind). A family whose scan does not follow block numbers leaves it
   * out; the core never asks the node for it.
   */
  heights?: { head: string; scanned?: string }
  /**
   * Every incoming amount this run saw (SeenAmount): what the balance
   * watch counts as explained. A family that reads balances reports it
   * every run, dust included.
   */
  seen?: SeenAmount[]
  /**
   * Balances read (normally when `readBalances` was set and the run caught
   * up; a family may also report a reading it held back from an earlier
   * run, or those of the accounts an interrupted run finished): each
   * watched address in each enabled token, as of `height`. The core records in the unmatched inbox any rise larger than
   * the amounts seen since the previous reading ("unexplained incoming
   * amount": value the scanner could not read).
   */
  balances?: { height: string; readings: BalanceReading[] }
  /**
   * A reorganisation replaced blocks the scan had already covered: every
   * block above `ancestor` (the newest block both chains share) up to
   * `replacedUpTo` (the old cursor) was replaced. The core flags the
   * payments credited from those blocks for the operator; the family
   * scans again from the block after `ancestor`.
   */
  reorg?: { ancestor: string; replacedUpTo: string }
}

/**
 * The tip of a chain as one endpoint reports it (the console's "test
 * connection"): a block height, a slot, a masterchain seqno ...
 */
export type ChainHead = {
  /** What `number` counts, in the family's own words ("block", "slot", "seqno"). */
  kind: string
  /** The height, as a decimal string (heights may exceed 2^53). */
  number: string
  /** Time of that block, epoch milliseconds; null when the answer does not carry it. */
  time: number | null
}

/**
 * A family option that every network of the family should name, asked for
 * by the console's add-network form (a required field) and compared with
 * what the endpoint serves (ChainFamily.checkEndpoint), e.g. a chain id.
 */
export type NetworkOptionField = {
  /** The option's key in chains.options (`chain:set --option name=…`). */
  name: string
  /** The form field's label. */
  label: string
  /** One sentence under the field. */
  help: string
  /** A whole number (the field asks for digits). */
  numeric?: boolean
}

/** An endpoint that answers, but for another network than the chain's options name. */
export type EndpointMismatch = {
  /** The option the answer contradicts (a NetworkOptionField's name). */
  option: string
  /** What the endpoint serves instead, in plain words. */
  message: string
}

/** What a head watch reports (ChainFamily.watchHeads). */
export type HeadHandlers = {
  /** A new head, as a decimal string in the family's numbering (block, slot…). */
  onHead(height: string): void
  /**
   * The watch broke (socket closed, subscription refused ...): no more
   * heads come through it. The core stops it and opens a new one after a
   * backoff, polling meanwhile.
   */
  onError(error: unknown): void
}

/** A running head watch; stop() closes it (idempotent, never throws). */
export type HeadWatch = { stop(): void }

/** What a payer's wallet needs to pay an order (QR code / deep link). */
export type PaymentUriContext = { chain: Chain; token: Token; order: Order }

export interface ChainFamily {
  /** Family name stored on `chains.family`. */
  readonly name: string

  /** Human description of a valid address, for error messages. */
  readonly addressFormat: string

  /**
   * Validates a receiving address and returns its canonical form (e.g.
   * with its checksum, in the family's preferred encoding). Throws
   * InvalidAddressError with a message an operator can act on.
   */
  normalizeAddress(address: string): string

  /** Same for a token contract (or mint, or master) address. */
  normalizeContract(contract: string): string

  /**
   * Checks a chain's options (chains.options, `chain:set --option k=v`,
   * values given as text) and returns them normalised. Throws
   * InvalidOptionsError naming the option and what it accepts. A family
   * without it takes no options.
   */
  validateOptions?(options: Record<string, unknown>): Record<string, unknown>

  /**
   * Looks a transaction reference up on chain and returns the transfers it
   * made (submit-tx-hash, orders:mark-paid). Throws TransferLookupError when
   * it cannot. The core checks recipient, token, amount, time and
   * confirmations against the order.
   */
  verifyReference?(reference: string, context: VerificationContext): Promise<ObservedTransfer[]>

  /** Finds new confirmed incoming transfers since the cursor (chains:scan). */
  scan?(context: ScanContext): Promise<ScanResult>

  /**
   * Pushes the chain's new heads as the node produces them, through the
   * chain's push endpoint (`chain.wsUrl`, e.g. a WebSocket subscription):
   * each head triggers a scan at once instead of at the next poll. Resolves
   * once the watch is open; rejects when it cannot be opened. A head is
   * only a trigger: the scan reads from its persisted cursor, so a missed
   * head only delays. Errors may quote the URL: the core redacts them.
   * A family without it takes no push endpoint (`chain:set --ws` refused).
   */
  watchHeads?(chain: Chain, handlers: HeadHandlers): Promise<HeadWatch>

  /**
   * The request budget of one endpoint when the operator set none: the
   * provider's documented free tier (e.g. 1 request/s without an API key).
   * Null (or no hook): the family knows no tier for this endpoint; the
   * core's default applies (none for a loopback or private address, the
   * chains.rpc_requests_per_* settings otherwise).
   */
  rpcBudget?(url: string, apiKey: string): RpcBudget | null

  /**
   * Requests per day scanning costs at the chain's scan interval for this
   * many watched addresses and enabled tokens, the balance watch's reads
   * every `balanceCheckMinutes` included (0: the watch is off) (chain:list
   * warns when it is over the endpoints' daily budget).
   */
  requestsPerDay?(
    chain: Chain,
    addresses: number,
    tokens: number,
    balanceCheckMinutes: number
  ): number

  /**
   * The chain's head as the pool's endpoint answers it, in one or two
   * cheap requests through `rpc` (the pool paces them and applies its
   * timeout). Used to test an endpoint: no state is kept.
   */
  head?(rpc: RpcPool, chain: Chain): Promise<ChainHead>

  /** Options a network of this family should name (see NetworkOptionField). */
  readonly networkOptions?: readonly NetworkOptionField[]

  /**
   * Whether the pool's endpoint serves the network the chain's options
   * name (e.g. the chain id the endpoint reports against a chain id
   * option), asked after a successful `head` by every connection test.
   * Null when it does, or when the options name nothing to compare;
   * rejects when the endpoint cannot answer. Without it, a test proves
   * only that the endpoint answers.
   */
  checkEndpoint?(rpc: RpcPool, chain: Chain): Promise<EndpointMismatch | null>

  /**
   * A payment URI for wallets (the family's URI scheme),
   * amount included, for the cashier's QR code.
   */
  paymentUri?(context: PaymentUriContext): string

  /**
   * The form of a canonical reference that block explorers take in their
   * transaction URLs (e.g. the transaction hash alone). The reference
   * itself when absent.
   */
  explorerReference?(reference: string): string
}
