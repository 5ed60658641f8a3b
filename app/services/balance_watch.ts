import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type Chain from '#models/chain'
import type Token from '#models/token'
import type { BalanceReading, ScanResult, SeenAmount } from '#chains/chain_family'
import settings from '#settings/settings_service'
import { recordUnmatched } from '#services/unmatched_inbox'
import { Decimal } from '#support/text/money'
import { metrics } from '#support/runtime/metrics'

/** Rows per multi-row INSERT (well under both databases' bound-parameter limits). */
const INSERT_CHUNK = 200

/** A height in the family's numbering: compared as integers, never as text. */
function height(text: string): bigint | null {
  return /^\d{1,40}$/.test(text) ? BigInt(text) : null
}

const contractKey = (contract: string | null) => contract ?? ''

/** Amounts seen are kept this long at most for a reading to cover them. */
const SEEN_KEPT_MS = 7 * 86_400_000

/**
 * No incoming value left unseen. A scanner reads transfers; value can also
 * arrive in ways it cannot read (native coin sent by a contract, a token
 * account it does not watch, an index that listed a transfer too late).
 * So, at most once per `chains.balance_check_minutes`, the family reads the
 * balance of each watched address in each enabled token as of a height;
 * every run it also says which incoming amounts it saw, with their
 * heights. Between two readings of an address and token, the balance may
 * rise by at most what was seen in between (outgoing transfers and fees
 * only lower it): a larger rise is recorded in the unmatched inbox as an
 * unexplained incoming amount, with its window, for the operator.
 *
 * Amounts seen are kept (once each, by reference and position) until a
 * reading covers their height; a reading that does not move past the
 * previous one (a lagging node) is ignored.
 */
export class BalanceWatch {
  /** True when the network's balances are due for a reading this run. */
  async due(network: string, now = Date.now()): Promise<boolean> {
    const minutes = await settings.get('chains.balance_check_minutes')
    if (minutes <= 0) return false
    const row = await db
      .from('balance_readings')
      .where('network', network)
      .max('read_at as last')
      .first()
    const last = row?.last === null || row?.last === undefined ? 0 : Number(row.last)
    return now - last >= minutes * 60_000
  }

  /**
   * After a scan: keeps what it saw, then compares the readings it took (if
   * any) with the previous ones. With the watch off nothing is kept (no
   * reading would ever cover it); amounts seen that no reading covered
   * within SEEN_KEPT_MS (an address whose balance cannot be read) are let go.
   */
  async record(
    chain: Chain,
    tokens: Token[],
    result: Pick<ScanResult, 'seen' | 'balances'>
  ): Promise<void> {
    if ((await settings.get('chains.balance_check_minutes')) <= 0) return
    await this.#keepSeen(chain.network, result.seen ?? [])
    await this.#explainLate(chain, tokens)
    await db
      .from('balance_seen')
      .where('network', chain.network)
      .where('seen_at', '<', Date.now() - SEEN_KEPT_MS)
      .delete()
    if (!result.balances) return
    for (const reading of result.balances.readings) {
      const at = height(reading.height ?? result.balances.height)
      if (at === null) {
        logger.warn(
          { network: chain.network, height: reading.height ?? result.balances.height },
          'a balance reading without a usable height ignored'
        )
        continue
      }
      await this.#compare(chain, tokens, reading, at)
    }
  }

  /**
   * Amounts seen at or below the last reading of their address and token
   * came in after that reading had been compared (an index that listed
   * them late): the unexplained notice of that window, if any, is reduced
   * by them, and set aside once they explain it all. They are then
   * covered (removed).
   */
  async #explainLate(chain: Chain, tokens: Token[]) {
    const late: Record<string, any>[] = await db
      .from('balance_seen as s')
      .join('balance_readings as r', (join) =>
        join
          .on('r.network', 's.network')
          .andOn('r.address', 's.address')
          .andOn('r.contract', 's.contract')
      )
      .where('s.network', chain.network)
      .select(
        's.id',
        's.address',
        's.contract',
        's.reference',
        's.amount',
        's.height',
        'r.height as read_height'
      )
    const covered = late.filter((row) => {
      const seenAt = height(row.height)
      const readAt = height(row.read_height)
      return seenAt !== null && readAt !== null && seenAt <= readAt
    })
    for (const row of covered) {
      const symbol = tokens.find((token) => contractKey(token.contract) === row.contract)?.symbol
      if (symbol)
        await this.#reduceNotice(
          chain.network,
          row.address,
          symbol,
          BigInt(row.height),
          new Decimal(row.amount),
          row.reference
        )
    }
    for (let start = 0; start < covered.length; start += INSERT_CHUNK) {
      await db
        .from('balance_seen')
        .whereIn(
          'id',
          covered.slice(start, start + INSERT_CHUNK).map((row) => row.id)
        )
        .delete()
    }
  }

  async #reduceNotice(
    network: string,
    address: string,
    symbol: string,
    at: bigint,
    amount: Decimal,
    reference: string
  ) {
    const notices = await db
      .from('unmatched_payments')
      .where({ network, to_address: address, token: symbol, kind: 'unexplained' })
      .whereNull('dismissed_at')
      .whereNull('assigned_at')
      .orderBy('id')
    const notice = notices.find((row) => {
      const window = /^balance:(\d+)-(\d+)$/.exec(row.reference)
      return window !== null && BigInt(window[1]) < at && at <= BigInt(window[2])
    })
    if (!notice) return
    const left = new Decimal(notice.amount).minus(amount)
    if (left.lte(0)) {
      await db
        .from('unmatched_payments')
        .where('id', notice.id)
        .whereNull('dismissed_at')
        .update({
          dismissed_at: Date.now(),
          dismissed_by: 'system',
          dismiss_note: `explained: the scanner saw the transfer late (${reference})`,
        })
      return
    }
    const reason = `${notice.reason} (${amount.toFixed()} seen late since)`
    await db
      .from('unmatched_payments')
      .where('id', notice.id)
      .update({
        amount: left.toFixed(),
        reason: reason.length > 255 ? `${reason.slice(0, 252)}...` : reason,
      })
  }

  async #keepSeen(network: string, seen: SeenAmount[]) {
    const rows = seen
      .filter((entry) => height(entry.height) !== null)
      .map((entry) => ({
        network,
        address: entry.to,
        contract: contractKey(entry.contract),
        reference: entry.reference,
        position: entry.position,
        amount: new Decimal(entry.amount).toFixed(),
        height: entry.height,
        seen_at: Date.now(),
      }))
    for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
      await db
        .connection()
        .knexQuery()
        .table('balance_seen')
        .insert(rows.slice(start, start + INSERT_CHUNK))
        .onConflict(['network', 'address', 'contract', 'reference', 'position'])
        .ignore()
    }
  }

  async #compare(chain: Chain, tokens: Token[], reading: BalanceReading, at: bigint) {
    const network = chain.network
    const contract = contractKey(reading.contract)
    const key = { network, address: reading.address, contract }
    const amount = new Decimal(reading.amount)
    const previous = await db.from('balance_readings').where(key).first()
    const now = Date.now()

    if (previous) {
      const since = height(previous.height)
      if (since !== null && at <= since) return // not past the last reading: nothing new to compare
      const seen = await db.from('balance_seen').where(key).select('amount', 'height')
      const explained = seen
        .filter((row) => {
          const h = height(row.height)
          return h !== null && (since === null || h > since) && h <= at
        })
        .reduce((sum, row) => sum.plus(row.amount), new Decimal(0))
      const rise = amount.minus(previous.amount)
      const excess = rise.minus(explained)
      if (excess.gt(0)) {
        await this.#report(chain, tokens, reading, {
          rise,
          explained,
          excess,
          from: previous,
          to: at,
          now,
        })
      }
    }

    await db.transaction(async (trx) => {
      const updated = await trx
        .from('balance_readings')
        .where(key)
        .update({ amount: amount.toFixed(), height: at.toString(), read_at: now })
      if (Number(updated) === 0) {
        await trx
          .table('balance_readings')
          .insert({ ...key, amount: amount.toFixed(), height: at.toString(), read_at: now })
      }
      // What this reading covers is accounted for; what lies above it waits for the next.
      const seen = await trx.from('balance_seen').where(key).select('id', 'height')
      const covered = seen
        .filter((row: { height: string }) => {
          const h = height(row.height)
          return h === null || h <= at
        })
        .map((row: { id: number }) => row.id)
      for (let start = 0; start < covered.length; start += INSERT_CHUNK) {
        await trx
          .from('balance_seen')
          .whereIn('id', covered.slice(start, start + INSERT_CHUNK))
          .delete()
      }
    })
  }

  async #report(
    chain: Chain,
    tokens: Token[],
    reading: BalanceReading,
    window: {
      rise: Decimal
      explained: Decimal
      excess: Decimal
      from: { height: string; read_at: number | string }
      to: bigint
      now: number
    }
  ) {
    const symbol = tokens.find((token) => token.contract === reading.contract)?.symbol ?? '?'
    const since = new Date(Number(window.from.read_at)).toISOString()
    const until = new Date(window.now).toISOString()
    const recorded = await recordUnmatched(chain.network, {
      reference: `balance:${window.from.height}-${window.to}`,
      position: '',
      kind: 'unexplained',
      to: reading.address,
      token: symbol,
      amount: window.excess.toFixed(),
      timestamp: window.now,
      reason:
        `unexplained incoming amount: the balance rose by ${window.rise.toFixed()} ${symbol} between ${since} and ${until} ` +
        `(heights ${window.from.height}–${window.to}); the transfers seen explain ${window.explained.toFixed()}`,
    })
    if (recorded) metrics.unexplainedIncoming.inc({ network: chain.network, token: symbol })
  }
}

const balanceWatch = new BalanceWatch()
export default balanceWatch
