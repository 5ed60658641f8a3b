import chainRegistry from '#chains/chain_registry'
import type {
  BalanceReading,
  SeenAmount,
  UnreadableTransfer,
  ChainFamily,
  ObservedTransfer,
  ScanContext,
  ScanResult,
  VerificationContext,
} from '#chains/chain_family'
import { TransferLookupError } from '#chains/chain_family'
import db from '@adonisjs/lucid/services/db'
import type { RpcBudget } from '#chains/rpc_pool'

/**
 * A chain family that exists only in tests: addresses are any "fake:…"
 * text, and transaction lookups answer from `transactions`. It stands in for
 * the real chain plugins where the order lifecycle, not the chain, is tested.
 */
export class FakeFamily implements ChainFamily {
  readonly name: string = 'fake'
  readonly addressFormat = 'fake:<anything>'
  transactions = new Map<string, ObservedTransfer[]>()
  lookups: string[] = []
  /** What the next scan returns (then emptied); `failScan` makes it throw. */
  pending: ObservedTransfer[] = []
  /** What every scan reports as not yet confirmed (kept until changed); undefined: the family did not look. */
  unconfirmed: ObservedTransfer[] | undefined = undefined
  failScan: string | null = null
  /** The next scan stops midway with this reason (then cleared), after what it did. */
  interrupt: string | null = null
  /** What the next scan reports as unreadable (then emptied). */
  unreadable: UnreadableTransfer[] = []
  scans: ScanContext[] = []
  /** What every scan reports as the chain's heights (kept until changed); undefined: none. */
  heights: ScanResult['heights'] = undefined
  /** What the next scan reports as seen incoming amounts (then emptied). */
  seen: SeenAmount[] = []
  /** What the next scan reports as balance readings, when the core asked for them (then cleared). */
  balances: { height: string; readings: BalanceReading[] } | null = null
  /** The family's default endpoint budget, when a test gives it one. */
  rpcBudget?: (url: string, apiKey: string) => RpcBudget
  /** A lookup sends one request to the chain's RPC pool first (as a real family does), when a test wants it counted. */
  lookupAsksRpc = false

  normalizeAddress(address: string) {
    if (!address.startsWith('fake:')) throw new Error('not a fake address')
    return address
  }

  normalizeContract(contract: string) {
    return this.normalizeAddress(contract)
  }

  async scan(context: ScanContext): Promise<ScanResult> {
    this.scans.push(context)
    if (this.failScan) throw new Error(this.failScan)
    // Dust is dropped first, as the real families do before any further call.
    let dust = 0
    const transfers = this.pending.filter((transfer) => {
      const isDust = context.isDust?.(transfer.contract, transfer.amount) ?? false
      if (isDust) dust++
      return !isDust
    })
    this.pending = []
    const unreadable = this.unreadable
    this.unreadable = []
    const interrupted = this.interrupt ?? undefined
    this.interrupt = null
    const previous = (context.cursor as { scans: number } | null)?.scans ?? 0
    const seen = this.seen
    this.seen = []
    // Read only when due, as a real family does.
    const balances = context.readBalances && this.balances ? this.balances : undefined
    this.balances = null
    return {
      seen,
      balances,
      transfers,
      unconfirmed: this.unconfirmed,
      cursor: { scans: previous + 1 },
      caughtUp: !interrupted,
      interrupted,
      unreadable,
      dust,
      heights: this.heights,
    }
  }

  paymentUri(context: { order: { receiveAddress: string; actualAmount: string } }) {
    return `fake:${context.order.receiveAddress}?amount=${context.order.actualAmount}`
  }

  async verifyReference(
    reference: string,
    _context: VerificationContext
  ): Promise<ObservedTransfer[]> {
    this.lookups.push(reference)
    if (this.lookupAsksRpc) {
      await _context.rpc.call(async (url) => {
        const response = await _context.rpc.fetch(url, {
          method: 'POST',
          body: '{"jsonrpc":"2.0","id":1,"method":"tx"}',
        })
        await response.text()
      })
    }
    const transfers = this.transactions.get(reference)
    if (!transfers) throw new TransferLookupError(`transaction ${reference} not found`)
    return transfers
  }
}

export const fakeFamily = new FakeFamily()
chainRegistry.register(fakeFamily)

export const FAKE_NETWORK = 'fakenet'
export const FAKE_WALLET = 'fake:wallet-1'
export const FAKE_USDT = 'fake:usdt-contract'

/** Adds the fake network with USDT (precision 2) and one wallet. */
export async function installFakeChain(confirmations = 1) {
  const now = Date.now()
  await db.table('chains').insert({
    network: FAKE_NETWORK,
    family: 'fake',
    display_name: 'Fake Net',
    chain_id: null,
    enabled: true,
    rpc_urls: '[]',
    confirmations,
    scan_interval_seconds: 5,
    sort_order: 1000,
    created_at: now,
    updated_at: now,
  })
  await db.table('tokens').insert({
    network: FAKE_NETWORK,
    symbol: 'USDT',
    contract: FAKE_USDT,
    decimals: 6,
    amount_precision: 2,
    enabled: true,
    created_at: now,
    updated_at: now,
  })
  await db.table('wallets').insert({
    network: FAKE_NETWORK,
    address: FAKE_WALLET,
    enabled: true,
    note: '',
    created_at: now,
    updated_at: now,
  })
  fakeFamily.transactions.clear()
  fakeFamily.lookups = []
  fakeFamily.pending = []
  fakeFamily.unconfirmed = undefined
  fakeFamily.scans = []
  fakeFamily.failScan = null
  fakeFamily.interrupt = null
  fakeFamily.unreadable = []
  fakeFamily.rpcBudget = undefined
  fakeFamily.lookupAsksRpc = false
  fakeFamily.heights = undefined
  fakeFamily.seen = []
  fakeFamily.balances = null
}

/** A successful USDT transfer to the fake wallet, made now. */
export function fakeTransfer(
  reference: string,
  amount: string,
  overrides: Partial<ObservedTransfer> = {}
) {
  const transfer: ObservedTransfer = {
    reference,
    position: 'log:0',
    to: FAKE_WALLET,
    contract: FAKE_USDT,
    amount,
    timestamp: Date.now(),
    confirmations: 5,
    success: true,
    ...overrides,
  }
  fakeFamily.transactions.set(reference, [transfer])
  return transfer
}
