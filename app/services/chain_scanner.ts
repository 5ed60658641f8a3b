import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import Chain from '#models/chain'
import Token from '#models/token'
import Wallet from '#models/wallet'
import Order, { OrderStatus } from '#models/order'
import settings from '#settings/settings_service'
import chainRegistry from '#chains/chain_registry'
import { rpcFor } from '#chains/chain_rpc'
import type { RpcPool } from '#chains/rpc_pool'
import type { ChainFamily, ScanResult } from '#chains/chain_family'
import paymentMatcher from '#services/payment_matcher'
import paymentSightings from '#services/payment_sightings'
import balanceWatch from '#services/balance_watch'
import reorgFlags from '#services/reorg_flags'
import { dustCheck, LATE_WINDOW_MS } from '#services/dust_threshold'
import { insertUnlessPresent } from '#support/database/insert_unless_present'
import { claimLeases, releaseLeases } from '#support/database/lease'
import { redactSecrets, serializeError } from '#support/http/redaction'

export type ScanReport = {
  network: string
  scanned: boolean
  transfers: number
  paid: number
  unmatched: number
  /** Transfers seen but not yet deep enough (never paid on; the payer's page shows them). */
  unconfirmed: number
  caughtUp: boolean
  /** Transfers the family dropped as dust (below the watched amounts) this run. */
  dust: number
  /** Transactions the family could not read, kept as unmatched. */
  unreadable: number
  /** Why the run stopped midway (what it did is saved); null when it did not. */
  interrupted: string | null
  detail: string
  /** Set when another process (or watch) holds the chain's scan lease: nothing was done. */
  busy?: true
  /** Where the chain stood in this run (family numbering), when the family says. */
  heights?: { head: string; scanned?: string }
  /** A reorganisation replaced scanned blocks above `ancestor`; `flagged` paid orders were flagged. */
  reorg?: { ancestor: string; replacedUpTo: string; flagged: number }
}

/** A height is a non-negative integer in decimal (kept as text, compared as BigInt); anything else a family sends is dropped. */
const HEIGHT = /^\d{1,40}$/

/**
 * The chain_cursors columns of a run's heights (console scanner status).
 * A run without heights leaves the stored ones as they were; a head
 * without a scanned height clears the stored scanned height (no longer
 * true).
 */
function heightColumns(heights: ScanResult['heights']): Record<string, unknown> {
  if (!heights || !HEIGHT.test(String(heights.head))) return {}
  const scanned =
    heights.scanned !== undefined && HEIGHT.test(String(heights.scanned))
      ? String(heights.scanned)
      : null
  return { head_height: String(heights.head), scanned_height: scanned, heights_at: Date.now() }
}

/** A scan lease outlives any scan run; a crashed scanner frees its chain then. */
const LEASE_MS = 5 * 60_000

/**
 * Runs the chain watchers: for each enabled chain whose family can scan,
 * asks the plugin for new confirmed transfers since the persisted cursor,
 * hands each to the matcher, and saves the new cursor. A chain is scanned
 * by one process at a time (a lease on its cursor row); when is the
 * chain watches' decision (app/chains/chain_watch.ts): on a new head, at
 * the scan interval, and immediately again while it has not caught up.
 *
 * A run the family reports as interrupted (a rate limit, an outage midway)
 * keeps what it did: its transfers are matched, its cursor saved, and the
 * reason is the chain's last error; the next run resumes there at the
 * chain's interval, not at once (the endpoints asked to slow down). A run
 * that throws saves nothing (the family could not say how far it got).
 */
export class ChainScanner {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  #claims = 0

  /**
   * The chains whose interval has elapsed, each scanned once (the
   * scheduler's entry before the chain watches, app/chains/chain_watch.ts;
   * kept for scripts).
   */
  async runDue(): Promise<ScanReport[]> {
    const now = Date.now()
    const chains = await this.#scannableChains()
    const cursors = await db
      .from('chain_cursors')
      .select('network', 'last_scan_at', 'caught_up', 'last_error')
    const due = chains.filter((chain) => {
      const cursor = cursors.find((row) => row.network === chain.network)
      if (!cursor) return true
      const caughtUp = Boolean(cursor.caught_up)
      // Behind with no error: at once. Interrupted (behind, with an error): at the interval.
      if (!caughtUp && !cursor.last_error) return true
      return now >= Number(cursor.last_scan_at) + chain.scanIntervalSeconds * 1000
    })
    return Promise.all(due.map((chain) => this.scanNetwork(chain)))
  }

  /** Operator entry (`chains:scan`): scan now, whatever the interval. */
  async scan(options: { network?: string } = {}): Promise<ScanReport[]> {
    const query = Chain.query().where('enabled', true).orderBy('sort_order')
    if (options.network) query.where('network', options.network.toLowerCase())
    const chains = await query
    const reports: ScanReport[] = []
    for (const chain of chains) {
      const family = this.#family(chain)
      if (!family?.scan) {
        reports.push(
          this.#report(chain, false, `scanning is not available for the ${chain.family} family`)
        )
        continue
      }
      reports.push(await this.scanNetwork(chain))
    }
    return reports
  }

  async scanNetwork(chain: Chain): Promise<ScanReport> {
    const family = this.#family(chain)
    if (!family?.scan)
      return this.#report(chain, false, `scanning is not available for the ${chain.family} family`)

    const [tokens, wallets] = await Promise.all([
      Token.query().where('network', chain.network).where('enabled', true),
      // A disabled wallet is handed to no new order, but the orders that
      // still hold a reservation on it may be paid there: watched until
      // their reservations end.
      Wallet.query()
        .where('network', chain.network)
        .where((watched) =>
          watched
            .where('enabled', true)
            .orWhereIn(
              'address',
              db.from('amount_locks').where('network', chain.network).select('address')
            )
        ),
    ])
    if (wallets.length === 0) return this.#report(chain, false, 'no wallet to watch')
    if (tokens.length === 0) return this.#report(chain, false, 'no enabled token')

    const claim = `${this.workerId}:${++this.#claims}`
    const row = await this.#claim(chain.network, claim)
    if (!row) return { ...this.#report(chain, false, 'another process is scanning it'), busy: true }

    let rpc: RpcPool | null = null
    try {
      rpc = await rpcFor(chain)
      if (rpc.urls.length > 0 && rpc.urls.every((url) => rpc!.budgetSpent(url))) {
        // Nothing can be asked: the cursor and its last error stay as they are.
        await this.#release(chain.network, claim, {})
        return this.#report(
          chain,
          false,
          'the daily request budget of every RPC endpoint is spent until 00:00 UTC'
        )
      }
      if (
        rpc.urls.length > 0 &&
        rpc.urls.every((url) => rpc!.budgetSpent(url) || rpc!.heldUntil(url) !== null)
      ) {
        // Every endpoint asked not to be asked (a long Retry-After, spent credits): nothing is sent; the reason is kept.
        const reason = `every RPC endpoint is held: ${rpc.urls.map((url) => rpc!.holdReason(url) || `${rpc!.redact(url)} has spent its daily budget`).join('; ')}`
        await this.#release(chain.network, claim, {
          last_error: reason.slice(0, 1000),
          caught_up: false,
        })
        return this.#report(chain, false, reason)
      }
      const cursor = row.cursor ? JSON.parse(row.cursor) : null
      const isDust = await dustCheck(chain.network, tokens, {
        percent: await settings.get('chains.dust_percent'),
        previousScanAt: Number(row.last_scan_at) || 0,
      })
      const result = await family.scan({
        chain,
        tokens,
        addresses: wallets.map((wallet) => wallet.address),
        cursor,
        startTime: cursor === null ? await this.#startTime(chain.network) : Date.now(),
        rpc,
        maxBlocksPerScan: await settings.get('chains.max_blocks_per_scan'),
        isDust,
        readBalances: await balanceWatch.due(chain.network),
      })

      // Payments of replaced blocks are flagged before this run's transfers (the new chain's) are matched.
      const reorged = result.reorg ? await reorgFlags.flag(chain, result.reorg) : 0
      let paid = 0
      let unmatched = 0
      for (const transfer of result.transfers) {
        const outcome = await paymentMatcher.handle(chain, tokens, transfer)
        if (outcome === 'paid') paid++
        if (outcome === 'unmatched') unmatched++
      }
      const unreadable = result.unreadable ?? []
      for (const item of unreadable) {
        await paymentMatcher.recordUnreadable(chain, tokens, {
          ...item,
          reason: rpc.redact(item.reason),
        })
      }
      await this.#recordSightings(chain, tokens, result)
      await this.#watchBalances(chain, tokens, result)
      const interrupted = result.interrupted ? rpc.redact(result.interrupted) : null
      if (interrupted)
        logger.warn(
          { network: chain.network, reason: interrupted },
          'chain scan interrupted; progress kept'
        )
      const heights = heightColumns(result.heights)
      await this.#release(chain.network, claim, {
        cursor: JSON.stringify(result.cursor),
        caught_up: interrupted ? false : result.caughtUp,
        last_error: interrupted ? `interrupted: ${interrupted}`.slice(0, 1000) : '',
        ...heights,
      })
      const dust = result.dust ?? 0
      return {
        ...(heights.head_height
          ? {
              heights: {
                head: String(heights.head_height),
                ...(heights.scanned_height ? { scanned: String(heights.scanned_height) } : {}),
              },
            }
          : {}),
        network: chain.network,
        scanned: true,
        ...(result.reorg ? { reorg: { ...result.reorg, flagged: reorged } } : {}),
        transfers: result.transfers.length,
        paid,
        unmatched,
        unconfirmed: result.unconfirmed?.length ?? 0,
        caughtUp: interrupted ? false : result.caughtUp,
        dust,
        unreadable: unreadable.length,
        interrupted,
        detail:
          `${interrupted ? `interrupted (${interrupted}), progress kept: ` : ''}` +
          `${result.reorg ? `reorganisation above block ${result.reorg.ancestor} (${reorged} paid order(s) flagged), ` : ''}` +
          `${result.transfers.length} transfer(s), ${paid} paid, ${unmatched} unmatched` +
          `${result.unconfirmed?.length ? `, ${result.unconfirmed.length} not yet confirmed` : ''}` +
          `${unreadable.length ? `, ${unreadable.length} unreadable (kept as unmatched)` : ''}` +
          `${dust ? `, ${dust} dust dropped` : ''}` +
          `${!interrupted && !result.caughtUp ? ', more to scan' : ''}`,
      }
    } catch (error) {
      // Kept, logged and printed without the chain's keys (URLs, API key).
      const raw = (error as Error).message || String(error)
      const secrets = rpc ? rpc.secrets : []
      const message = redactSecrets(raw, secrets)
      logger.error(
        { network: chain.network, err: serializeError(error, secrets) },
        'chain scan failed'
      )
      await this.#release(chain.network, claim, {
        last_error: message.slice(0, 1000),
        caught_up: true,
      })
      return { ...this.#report(chain, false, `scan failed: ${message}`) }
    } finally {
      // What the run learned of its endpoints (a log range, a hold) is written before it ends.
      await rpc?.settled()
    }
  }

  /**
   * Sightings only inform the payer's page: a failure here is logged and
   * never stops the scan (the payments of this run are already made and
   * the cursor must still move on).
   */
  async #recordSightings(chain: Chain, tokens: Token[], result: ScanResult) {
    try {
      await paymentSightings.record(chain, tokens, result.transfers, result.unconfirmed)
    } catch (error) {
      logger.warn({ network: chain.network, err: error }, 'payment sightings could not be recorded')
    }
  }

  /**
   * The balance watch informs the operator: a failure is logged and never
   * stops the scan (its payments are made, its cursor must move on).
   */
  async #watchBalances(chain: Chain, tokens: Token[], result: ScanResult) {
    try {
      await balanceWatch.record(chain, tokens, result)
    } catch (error) {
      logger.warn({ network: chain.network, err: error }, 'balance watch could not be recorded')
    }
  }

  #family(chain: Chain): ChainFamily | null {
    return chainRegistry.find(chain.family)
  }

  async #scannableChains() {
    const chains = await Chain.query().where('enabled', true).orderBy('sort_order')
    return chains.filter((chain) => Boolean(this.#family(chain)?.scan))
  }

  /** Oldest order worth watching on the network (first scan only). */
  async #startTime(network: string): Promise<number> {
    const now = Date.now()
    const oldest = await Order.query()
      .where('network', network)
      .where((query) =>
        query
          .where('status', OrderStatus.WAITING)
          .orWhere((expired) =>
            expired
              .where('status', OrderStatus.EXPIRED)
              .where('expiration_time', '>', now - LATE_WINDOW_MS)
          )
      )
      .orderBy('created_at', 'asc')
      .first()
    return oldest ? Math.min(oldest.createdAt, now) : now
  }

  async #claim(network: string, claim: string) {
    const now = Date.now()
    await insertUnlessPresent(
      db.connection(),
      'chain_cursors',
      { network, cursor: '', caught_up: true, last_scan_at: 0, last_error: '', updated_at: now },
      'network'
    )
    const [id] = await claimLeases({
      table: 'chain_cursors',
      token: claim,
      leaseMs: LEASE_MS,
      scope: (query) => query.where('network', network),
      now,
      set: { updated_at: now },
    })
    if (id === undefined) return null
    return db.from('chain_cursors').where('id', id).where('locked_by', claim).first()
  }

  async #release(network: string, claim: string, changes: Record<string, unknown>) {
    const now = Date.now()
    await releaseLeases({
      table: 'chain_cursors',
      token: claim,
      scope: (query) => query.where('network', network),
      changes: { ...changes, last_scan_at: now, updated_at: now },
    })
  }

  #report(chain: Chain, scanned: boolean, detail: string): ScanReport {
    return {
      network: chain.network,
      scanned,
      transfers: 0,
      paid: 0,
      unmatched: 0,
      unconfirmed: 0,
      caughtUp: true,
      dust: 0,
      unreadable: 0,
      interrupted: null,
      detail,
    }
  }
}

const chainScanner = new ChainScanner()
export default chainScanner
