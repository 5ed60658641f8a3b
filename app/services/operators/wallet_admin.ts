import db from '@adonisjs/lucid/services/db'
import Wallet from '#models/wallet'
import type Chain from '#models/chain'
import AmountLock from '#models/amount_lock'
import { OrderStatus } from '#models/order'
import { InvalidAddressError } from '#chains/chain_family'
import { OperatorError, type Refusal } from '#support/cli/operator_error'
import { isUniqueViolation } from '#support/database/database_errors'
import { Decimal, toDecimalString } from '#support/text/money'
import chainAdmin from '#services/operators/chain_admin'
import auditLog from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'

/** Longest stored address (wallets.address) and note (wallets.note). */
const MAX_ADDRESS_LENGTH = 128
const MAX_NOTE_LENGTH = 255
/** Entries one import takes at most (blank and comment lines not counted). */
export const MAX_IMPORT_ENTRIES = 1000
/** Largest pasted text an import reads. */
const MAX_IMPORT_CHARACTERS = 200_000
/** Addresses per query of `usage` (bound parameters stay well under the databases' limits). */
const USAGE_CHUNK = 500

/** Removal refused: amounts are still reserved on the wallet for orders. */
export class WalletInUseError extends OperatorError {
  constructor(
    readonly address: string,
    readonly reservations: number
  ) {
    super(
      `${reservations} order(s) still wait for a payment to ${address} (amounts are reserved on it): ` +
        'disable the wallet so that no new order uses it, and remove it once they have ended',
      { key: 'wallet_in_use', args: { count: reservations, address } }
    )
  }
}

export type WalletChanges = { enabled?: boolean; note?: string }

export type WalletFilters = {
  network?: string
  enabled?: boolean
  /** Part of the address (case-insensitive) or of the note. */
  search?: string
}

/** One line of a batch import and what became of it. */
export type ImportLine = {
  /** Line number in the pasted text, from 1. */
  line: number
  /** The line as pasted (trimmed). */
  text: string
  network: string | null
  /** The address as written on the line (null when the line could not be split). */
  given: string | null
  /** The canonical address when it could be read. */
  address: string | null
  outcome: 'added' | 'present' | 'invalid'
  /** Why it is invalid, or where it was present already (English); null when added. */
  reason: string | null
  /** The reason as a refusal of the console's catalogue (app/admin/refusal_text.ts), or null. */
  refusal: Refusal | null
}

export type ImportReport = { lines: ImportLine[]; added: number; present: number; invalid: number }

/** Orders and received volume of one wallet. */
export type WalletUsage = {
  /** Orders handed this address (any status). */
  orders: number
  paidOrders: number
  /** Amounts reserved on it now (waiting orders, or ended less than the late-payment grace ago). */
  reserved: number
  /** Sum of the amounts of its paid orders, per token, as decimal strings. */
  received: { token: string; amount: string }[]
}

const NO_USAGE: WalletUsage = { orders: 0, paidOrders: 0, reserved: 0, received: [] }

export type WalletPage = { rows: Wallet[]; next: string | null }

function walletCursor(wallet: Wallet) {
  return Buffer.from(`${wallet.id}:${wallet.network}`).toString('base64url')
}

function readWalletCursor(cursor: string): { id: number; network: string } | null {
  const match = /^(\d{1,15}):([a-z0-9-]{1,32})$/.exec(Buffer.from(cursor, 'base64url').toString())
  return match ? { id: Number(match[1]), network: match[2] } : null
}

export function walletKey(network: string, address: string) {
  return `${network}/${address}`
}

/**
 * Receiving wallets as operators manage them (ace commands and the admin
 * console): addresses are checked and normalised by the network's family,
 * and a refusal is an OperatorError whose message is meant for the
 * operator. Every change is audited.
 */
export class WalletAdmin {
  constructor(
    protected chains = chainAdmin,
    protected audit = auditLog
  ) {}

  list(network?: string) {
    return this.filtered({ network })
  }

  /** Wallets by network, then oldest first, filtered. */
  filtered(filters: WalletFilters = {}) {
    const query = Wallet.query().orderBy('network').orderBy('id')
    if (filters.network) query.where('network', filters.network.toLowerCase())
    if (filters.enabled !== undefined) query.where('enabled', filters.enabled)
    const search = filters.search?.trim()
    if (search) {
      const pattern = `%${search.toLowerCase().replace(/[\\%_]/g, (character) => `\\${character}`)}%`
      query.where((inner) =>
        inner
          .whereRaw("lower(address) like ? escape '\\'", [pattern])
          .orWhereRaw("lower(note) like ? escape '\\'", [pattern])
      )
    }
    return query
  }

  /**
   * One page of `filtered`, in the same order (network, then oldest
   * first), continuing after the cursor `after` (the `next` of the page
   * before; an unreadable one starts over).
   */
  async page(
    filters: WalletFilters = {},
    page: { after?: string | null; limit?: number } = {}
  ): Promise<WalletPage> {
    const limit = Math.min(Math.max(Math.trunc(page.limit ?? 50), 1), 200)
    const query = this.filtered(filters)
    const cursor = page.after ? readWalletCursor(page.after) : null
    if (cursor) {
      query.where((later) =>
        later
          .where('network', '>', cursor.network)
          .orWhere((same) => same.where('network', cursor.network).where('id', '>', cursor.id))
      )
    }
    const rows = await query.limit(limit + 1)
    const more = rows.length > limit
    const shown = rows.slice(0, limit)
    const last = shown.at(-1)
    return { rows: shown, next: more && last ? walletCursor(last) : null }
  }

  async findById(id: number) {
    const wallet = Number.isSafeInteger(id) ? await Wallet.find(id) : null
    if (!wallet) throw new OperatorError(`No wallet #${id}`, { key: 'no_wallet_id', args: { id } })
    return wallet
  }

  /** The address in the family's canonical form; an invalid one is refused with the family's reason. */
  canonicalAddress(chain: Chain, address: string): string {
    let normalized: string
    try {
      normalized = this.chains.familyOf(chain).normalizeAddress(address)
    } catch (error) {
      if (error instanceof InvalidAddressError)
        throw new OperatorError(error.message, {
          key: 'invalid_address',
          args: { reason: error.message },
          reason: error.reason,
        })
      throw error
    }
    if (normalized.length > MAX_ADDRESS_LENGTH) {
      throw new OperatorError(`An address is at most ${MAX_ADDRESS_LENGTH} characters`, {
        key: 'address_too_long',
        args: { max: MAX_ADDRESS_LENGTH },
      })
    }
    return normalized
  }

  #note(note: string) {
    const value = note.trim()
    if (value.length > MAX_NOTE_LENGTH)
      throw new OperatorError(`A note is at most ${MAX_NOTE_LENGTH} characters`, {
        key: 'wallet_note_too_long',
        args: { max: MAX_NOTE_LENGTH },
      })
    return value
  }

  /** Stores a checked address, audited; null when the network has it already. */
  async #insert(chain: Chain, address: string, note: string): Promise<Wallet | null> {
    try {
      return await this.audit.change(
        (trx) =>
          Wallet.create({ network: chain.network, address, enabled: true, note }, { client: trx }),
        (wallet) => ({
          action: 'wallet.add',
          subjectType: 'wallet',
          subjectId: walletKey(wallet.network, wallet.address),
          after: snapshot.wallet(wallet),
        })
      )
    } catch (error) {
      if (isUniqueViolation(error)) return null
      throw error
    }
  }

  async add(network: string, address: string, note = '') {
    const chain = await this.chains.find(network)
    const normalized = this.canonicalAddress(chain, address)
    const wallet = await this.#insert(chain, normalized, this.#note(note))
    if (!wallet)
      throw new OperatorError(
        `Wallet address already exists (10001): ${normalized} on ${chain.network}`,
        { key: 'wallet_exists', args: { address: normalized, network: chain.network } }
      )
    return wallet
  }

  /** The stored wallet of an address (any accepted form of it). */
  async find(network: string, address: string) {
    const chain = await this.chains.find(network)
    let normalized = address.trim()
    try {
      normalized = this.canonicalAddress(chain, address)
    } catch {
      // a malformed address cannot be stored either: reported as not found
    }
    const wallet = await Wallet.query()
      .where('network', chain.network)
      .where('address', normalized)
      .first()
    if (!wallet)
      throw new OperatorError(`No wallet ${address} on ${chain.network}`, {
        key: 'no_wallet',
        args: { address, network: chain.network },
      })
    return wallet
  }

  /**
   * Enables or disables a wallet, or changes its note. A disabled wallet
   * is handed to no new order; payments to it for orders that still hold
   * a reservation on it are watched until the reservation ends.
   */
  async update(network: string, address: string, changes: WalletChanges) {
    const wallet = await this.find(network, address)
    const before = snapshot.wallet(wallet)
    if (changes.enabled !== undefined) wallet.enabled = changes.enabled
    if (changes.note !== undefined) wallet.note = this.#note(changes.note)
    if (!wallet.$isDirty) return wallet
    return this.audit.change(
      async (trx) => {
        wallet.useTransaction(trx)
        await wallet.save()
        return wallet
      },
      (saved) => ({
        action: 'wallet.update',
        subjectType: 'wallet',
        subjectId: walletKey(saved.network, saved.address),
        before,
        after: snapshot.wallet(saved),
      })
    )
  }

  /** Amounts reserved on a wallet now (each for one order). */
  async reservations(wallet: Wallet): Promise<number> {
    const [row] = await AmountLock.query()
      .where('network', wallet.network)
      .where('address', wallet.address)
      .count('* as total')
    return Number(row.$extras.total)
  }

  /**
   * Removes a wallet. Refused (WalletInUseError) while amounts are reserved
   * on it for orders, whose payments would no longer be watched, unless
   * `force` is given (ace only).
   */
  async remove(network: string, address: string, force = false) {
    const wallet = await this.find(network, address)
    const count = await this.reservations(wallet)
    if (count > 0 && !force) throw new WalletInUseError(wallet.address, count)
    const before = snapshot.wallet(wallet)
    await this.audit.change(
      async (trx) => {
        wallet.useTransaction(trx)
        await wallet.delete()
      },
      () => ({
        action: force && count > 0 ? 'wallet.remove_forced' : 'wallet.remove',
        subjectType: 'wallet',
        subjectId: walletKey(wallet.network, wallet.address),
        before,
        after: null,
      })
    )
    return wallet
  }

  /**
   * Adds the wallets of a pasted text and reports on every line.
   *
   * Format: one wallet per line, either `ADDRESS` (on `defaultNetwork`) or
   * `NETWORK ADDRESS` (the network separated by spaces, a tab, a comma or
   * a semicolon: a two-column CSV works). Blank lines and lines starting
   * with `#` are skipped. Each address is checked and normalised by its
   * network's family; an address already stored, or given twice, is
   * reported as present. Lines are independent: a bad line refuses only
   * itself, and each added wallet is audited on its own. More than
   * MAX_IMPORT_ENTRIES entries are refused as a whole, before any is added.
   */
  async importBatch(
    text: string,
    options: { defaultNetwork?: string } = {}
  ): Promise<ImportReport> {
    if (text.length > MAX_IMPORT_CHARACTERS) {
      throw new OperatorError(
        `The pasted text is longer than ${MAX_IMPORT_CHARACTERS.toLocaleString('en-US')} characters`,
        { key: 'import_too_long', args: { max: MAX_IMPORT_CHARACTERS.toLocaleString('en-US') } }
      )
    }
    const entries = text
      .split(/\r\n|\r|\n/)
      .map((raw, index) => ({ line: index + 1, text: raw.trim() }))
      .filter((entry) => entry.text !== '' && !entry.text.startsWith('#'))
    if (entries.length === 0)
      throw new OperatorError('Nothing to import: paste one address per line', {
        key: 'import_empty',
      })
    if (entries.length > MAX_IMPORT_ENTRIES) {
      throw new OperatorError(
        `At most ${MAX_IMPORT_ENTRIES} addresses per import (${entries.length} given)`,
        { key: 'import_too_many', args: { max: MAX_IMPORT_ENTRIES, given: entries.length } }
      )
    }
    const defaultNetwork = options.defaultNetwork?.trim().toLowerCase() || null

    const chains = new Map<string, Promise<Chain>>()
    const chainOf = (network: string) => {
      if (!chains.has(network)) chains.set(network, this.chains.find(network))
      return chains.get(network)!
    }
    const seen = new Map<string, number>()
    const lines: ImportLine[] = []
    for (const entry of entries) {
      const result: ImportLine = {
        ...entry,
        network: null,
        given: null,
        address: null,
        outcome: 'invalid',
        reason: null,
        refusal: null,
      }
      lines.push(result)
      const parts = entry.text.split(/[\s,;]+/).filter((part) => part !== '')
      if (parts.length > 2) {
        result.reason = 'expected "address" or "network address"'
        result.refusal = { key: 'import_line_format' }
        continue
      }
      const network = parts.length === 2 ? parts[0].toLowerCase() : defaultNetwork
      const address = parts.length === 2 ? parts[1] : parts[0]
      result.given = address
      if (!network) {
        result.reason =
          'no network: write "network address", or choose a network for the lines without one'
        result.refusal = { key: 'import_line_no_network' }
        continue
      }
      result.network = network
      try {
        const chain = await chainOf(network)
        result.network = chain.network
        result.address = this.canonicalAddress(chain, address)
        const key = walletKey(chain.network, result.address)
        const earlier = seen.get(key)
        if (earlier !== undefined) {
          result.outcome = 'present'
          result.reason = `same wallet as line ${earlier}`
          result.refusal = { key: 'import_line_repeated', args: { line: earlier } }
          continue
        }
        seen.set(key, entry.line)
        const added = await this.#insert(chain, result.address, '')
        result.outcome = added ? 'added' : 'present'
        result.reason = added ? null : 'already present'
        result.refusal = added ? null : { key: 'import_line_present' }
      } catch (error) {
        if (!(error instanceof OperatorError)) throw error
        result.reason = error.message
        result.refusal = error.refusal
      }
    }
    const count = (outcome: ImportLine['outcome']) =>
      lines.filter((line) => line.outcome === outcome).length
    return { lines, added: count('added'), present: count('present'), invalid: count('invalid') }
  }

  /**
   * Orders, paid orders, reservations and received volume per token of
   * each wallet, keyed by walletKey(network, address): one grouped query
   * over the orders (index network, receive_address, token) and one over
   * the reservations, whatever the number of wallets (in chunks of 500).
   * Sums are exact on PostgreSQL; SQLite adds doubles, exact up to 15
   * significant digits.
   */
  async usage(wallets: Pick<Wallet, 'network' | 'address'>[]): Promise<Map<string, WalletUsage>> {
    const usage = new Map<string, WalletUsage>()
    const wanted = new Set(wallets.map((wallet) => walletKey(wallet.network, wallet.address)))
    const entry = (key: string) => {
      let found = usage.get(key)
      if (!found) usage.set(key, (found = { ...NO_USAGE, received: [] }))
      return found
    }
    for (let start = 0; start < wallets.length; start += USAGE_CHUNK) {
      const chunk = wallets.slice(start, start + USAGE_CHUNK)
      const networks = [...new Set(chunk.map((wallet) => wallet.network))]
      const addresses = [...new Set(chunk.map((wallet) => wallet.address))]
      const [orders, locks] = await Promise.all([
        db
          .from('orders')
          .whereIn('network', networks)
          .whereIn('receive_address', addresses)
          .groupBy('network', 'receive_address', 'token')
          .select('network', 'receive_address', 'token')
          .count('* as orders')
          .select(
            db.raw('sum(case when status = ? then 1 else 0 end) as paid', [OrderStatus.PAID]),
            db.raw('sum(case when status = ? then actual_amount else 0 end) as received', [
              OrderStatus.PAID,
            ])
          ),
        db
          .from('amount_locks')
          .whereIn('network', networks)
          .whereIn('address', addresses)
          .groupBy('network', 'address')
          .select('network', 'address')
          .count('* as total'),
      ])
      for (const row of orders) {
        const key = walletKey(row.network, row.receive_address)
        if (!wanted.has(key)) continue // same address on another network of the chunk
        const found = entry(key)
        found.orders += Number(row.orders)
        found.paidOrders += Number(row.paid ?? 0)
        if (Number(row.paid ?? 0) > 0) {
          // SQLite sums doubles: back to the 8 decimals amounts are stored with.
          const amount = toDecimalString(new Decimal(String(row.received ?? 0)).decimalPlaces(8))
          found.received.push({ token: row.token, amount })
        }
      }
      for (const row of locks) {
        const key = walletKey(row.network, row.address)
        if (wanted.has(key)) entry(key).reserved += Number(row.total)
      }
    }
    for (const found of usage.values())
      found.received.sort((a, b) => a.token.localeCompare(b.token))
    return usage
  }

  /** The usage of one wallet (zeros when it was never used). */
  static usageOf(
    usage: Map<string, WalletUsage>,
    wallet: Pick<Wallet, 'network' | 'address'>
  ): WalletUsage {
    return usage.get(walletKey(wallet.network, wallet.address)) ?? { ...NO_USAGE, received: [] }
  }
}

const walletAdmin = new WalletAdmin()
export default walletAdmin
