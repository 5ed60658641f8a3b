import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import Chain from '#models/chain'
import chainRegistry from '#chains/chain_registry'
import type { ChainFamily, HeadWatch } from '#chains/chain_family'
import chainScanner, { type ScanReport } from '#services/chain_scanner'
import { redactSecrets, serializeError, urlCredentials } from '#support/http/redaction'

/** Shortest poll interval, whatever the block time says (sub-second chains). */
export const MIN_POLL_MS = 1000
/** Reconnection backoff of a dropped push watch: doubles from the first to the last. */
export const RECONNECT_FIRST_MS = 1000
export const RECONNECT_MAX_MS = 60_000
/** A scan that lost the lease to another process, after a head: tried again this soon. */
const BUSY_RETRY_MS = 300
/** The scan saw an older head than the one notified (a lagging HTTP backend): tried again this soon, this often. */
const BEHIND_RETRY_MS = 200
const BEHIND_RETRIES = 5

type Trigger = 'start' | 'head' | 'poll' | 'reconnect' | 'retry'

/** What a network's watch is doing (tests, logs). */
export type WatchState = {
  network: string
  /** 'push': the chain has a push endpoint (WebSocket) configured; 'poll': polled only. */
  mode: 'push' | 'poll'
  /** Push watch: 'up' once open, 'down' between a failure and the next attempt. */
  push: 'off' | 'connecting' | 'up' | 'down'
  /** Current poll interval, ms (shorter while a configured push watch is down). */
  pollMs: number
  heads: number
  scans: number
  /** A scan of the chain is running in this process. */
  scanning: boolean
  /** Push watches opened after a failure. */
  reconnects: number
  /** Newest head notified, decimal string; null before the first. */
  lastHead: string | null
  /** Last push failure, redacted; null when none. */
  lastError: string | null
}

function signature(chain: Chain) {
  return JSON.stringify([
    chain.family,
    chain.wsUrl ?? null,
    chain.scanIntervalSeconds,
    chain.blockTimeMs,
  ])
}

/**
 * Watches one enabled chain: a scan runs when the chain has a new head (the
 * family's push watch, e.g. a WebSocket subscription), and otherwise every
 * poll interval (the chain's scan interval: the longest time between two
 * scans). The persisted cursor stays the only truth: a head is only a
 * trigger, so a missed one only delays until the next head or poll.
 *
 * Coalesced: at most one scan of the chain runs in this process, and heads
 * arriving meanwhile leave one re-run pending. Across processes the scan
 * lease (chain_cursors) keeps scans single; a poll skips while another
 * process scanned within the interval. A push watch that fails is reopened
 * after a doubling backoff (1 s to 60 s), the chain polled meanwhile at its
 * block time (at least 1 s).
 */
class NetworkWatch {
  readonly signature: string
  #running: Promise<void> | null = null
  #pending: Trigger | null = null
  #timer: NodeJS.Timeout | null = null
  #reconnectTimer: NodeJS.Timeout | null = null
  #push: HeadWatch | null = null
  #generation = 0
  #backoff = RECONNECT_FIRST_MS
  #stopped = false
  #failedBefore = false
  #lastHead: bigint | null = null
  #behindRetries = 0
  readonly state: WatchState

  constructor(
    public chain: Chain,
    readonly family: ChainFamily
  ) {
    this.signature = signature(chain)
    this.state = {
      network: chain.network,
      mode: this.#pushable ? 'push' : 'poll',
      push: 'off',
      pollMs: this.#pollMs(),
      heads: 0,
      scans: 0,
      scanning: false,
      reconnects: 0,
      lastHead: null,
      lastError: null,
    }
  }

  get #pushable() {
    return Boolean(this.chain.wsUrl && this.family.watchHeads)
  }

  /** The scan interval; while a configured push watch is down, the block time if shorter. */
  #pollMs() {
    const interval = Math.max(MIN_POLL_MS, this.chain.scanIntervalSeconds * 1000)
    if (this.#pushable && this.state?.push !== 'up') {
      return Math.min(interval, Math.max(MIN_POLL_MS, this.chain.blockTimeMs))
    }
    return interval
  }

  start() {
    if (this.#pushable) void this.#openPush()
    this.trigger('start')
  }

  /** Runs a scan now, or once more after the running one. */
  trigger(reason: Trigger) {
    if (this.#stopped) return
    if (this.#running) {
      if (this.#pending === null || reason === 'head') this.#pending = reason
      return
    }
    this.#clearTimer()
    this.state.scanning = true
    this.#running = this.#run(reason).finally(() => {
      this.#running = null
      this.state.scanning = false
      this.#arm()
    })
  }

  async stop() {
    this.#stopped = true
    this.#generation++
    this.#clearTimer()
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer)
    this.#reconnectTimer = null
    this.#closePush()
    await this.#running
  }

  async #run(first: Trigger) {
    let reason: Trigger | null = first
    while (reason !== null && !this.#stopped) {
      this.#pending = null
      let report: ScanReport | null = null
      try {
        report = await chainScanner.scanNetwork(this.chain)
        this.state.scans++
      } catch (error) {
        // The scanner keeps its own errors; this is the database or a bug.
        logger.error(
          { network: this.chain.network, err: error },
          'chain watch: the scan could not run'
        )
      }
      reason = this.#pending ?? this.#again(report, reason)
    }
  }

  /** Whether the finished scan calls for another at once (behind) or soon (busy, lagging head). */
  #again(report: ScanReport | null, reason: Trigger): Trigger | null {
    if (!report) return null
    // Behind after a bounded run (not interrupted): on at once.
    if (report.scanned && !report.caughtUp && !report.interrupted) return 'retry'
    if (report.busy && reason === 'head') {
      this.#soon(BUSY_RETRY_MS)
      return null
    }
    const head = report.heights?.head
    if (
      report.scanned &&
      head !== undefined &&
      this.#lastHead !== null &&
      BigInt(head) < this.#lastHead
    ) {
      if (this.#behindRetries++ < BEHIND_RETRIES) this.#soon(BEHIND_RETRY_MS)
      return null
    }
    this.#behindRetries = 0
    return null
  }

  #soon(ms: number) {
    this.#clearTimer()
    this.#timer = setTimeout(() => {
      this.#timer = null
      this.trigger('retry')
    }, ms)
    this.#timer.unref?.()
  }

  /** The next poll, unless one is armed already (a retry). */
  #arm() {
    if (this.#stopped || this.#running || this.#timer) return
    const ms = this.#pollMs()
    this.state.pollMs = ms
    this.#timer = setTimeout(() => {
      this.#timer = null
      void this.#poll(ms)
    }, ms)
    this.#timer.unref?.()
  }

  /** Re-arms the poll at the current interval (it changed: push up or down). */
  #rearm() {
    if (this.#running) return
    this.#clearTimer()
    this.#arm()
  }

  /** A poll: skipped (re-armed for the rest) while another process scanned within the interval. */
  async #poll(ms: number) {
    if (this.#stopped || this.#running) return
    try {
      const row = await db
        .from('chain_cursors')
        .where('network', this.chain.network)
        .select('last_scan_at')
        .first()
      const wait = Number(row?.last_scan_at ?? 0) + ms - Date.now()
      if (wait > 50 && !this.#running && !this.#stopped) {
        this.#timer = setTimeout(() => {
          this.#timer = null
          void this.#poll(ms)
        }, wait)
        this.#timer.unref?.()
        return
      }
    } catch {
      // The database is not answering: the scan will say so.
    }
    this.trigger('poll')
  }

  #clearTimer() {
    if (this.#timer) clearTimeout(this.#timer)
    this.#timer = null
  }

  #secrets() {
    return urlCredentials(this.chain.wsUrl ?? '')
  }

  async #openPush() {
    if (this.#stopped || !this.#pushable) return
    const generation = ++this.#generation
    this.state.push = 'connecting'
    try {
      const watch = await this.family.watchHeads!(this.chain, {
        onHead: (height) => {
          if (generation !== this.#generation || this.#stopped) return
          this.#onHead(height)
        },
        onError: (error) => {
          if (generation !== this.#generation || this.#stopped) return
          this.#pushFailed(error)
        },
      })
      if (generation !== this.#generation || this.#stopped) {
        watch.stop()
        return
      }
      this.#push = watch
      this.state.push = 'up'
      this.#rearm()
      if (this.#failedBefore) {
        this.state.reconnects++
        logger.info(
          { network: this.chain.network },
          'chain watch: head notifications back; scanning what was missed'
        )
        // Heads may have come while it was down: the cursor knows where to resume.
        this.trigger('reconnect')
      }
    } catch (error) {
      if (generation !== this.#generation || this.#stopped) return
      this.#pushFailed(error)
    }
  }

  #onHead(height: string) {
    this.state.heads++
    this.#backoff = RECONNECT_FIRST_MS
    if (/^\d{1,40}$/.test(height)) {
      const value = BigInt(height)
      if (this.#lastHead === null || value > this.#lastHead) this.#lastHead = value
      this.state.lastHead = this.#lastHead.toString()
    }
    this.trigger('head')
  }

  #pushFailed(error: unknown) {
    this.#generation++
    this.#closePush()
    this.#failedBefore = true
    this.state.push = 'down'
    const secrets = this.#secrets()
    const message = redactSecrets((error as Error)?.message || String(error), secrets).slice(0, 500)
    this.state.lastError = message
    const delay = this.#backoff
    this.#backoff = Math.min(RECONNECT_MAX_MS, this.#backoff * 2)
    logger.warn(
      { network: this.chain.network, err: serializeError(error, secrets), retryInMs: delay },
      'chain watch: head notifications lost; polling at the block time until they are back'
    )
    this.#rearm()
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer)
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null
      void this.#openPush()
    }, delay)
    this.#reconnectTimer.unref?.()
  }

  #closePush() {
    const push = this.#push
    this.#push = null
    try {
      push?.stop()
    } catch {
      // Closing a broken watch may throw; it is gone either way.
    }
  }
}

/**
 * The chain watches of this process (started with the background jobs,
 * app/jobs/job_worker.ts). `sync()` (the scheduler's chains job, every
 * second) follows the configuration: an enabled chain gains a watch, a
 * disabled one loses it, a changed one (push endpoint, scan interval,
 * block time) is restarted.
 */
export class ChainWatch {
  #watches = new Map<string, NetworkWatch>()
  #started = false
  #syncing: Promise<void> | null = null

  get started() {
    return this.#started
  }

  /** Starts watching; a first sync that fails (database away) is logged, the scheduler's next one retries. */
  async start() {
    this.#started = true
    await this.sync().catch((error) =>
      logger.error({ err: error }, 'chain watch: the chains could not be read')
    )
  }

  sync(): Promise<void> {
    if (!this.#started) return Promise.resolve()
    if (!this.#syncing) this.#syncing = this.#sync().finally(() => (this.#syncing = null))
    return this.#syncing
  }

  async #sync() {
    const chains = await Chain.query().where('enabled', true).orderBy('sort_order')
    const wanted = new Map<string, { chain: Chain; family: ChainFamily }>()
    for (const chain of chains) {
      const family = chainRegistry.find(chain.family)
      if (family?.scan) wanted.set(chain.network, { chain, family })
    }
    for (const [network, watch] of this.#watches) {
      const next = wanted.get(network)
      if (next && next.family === watch.family && signature(next.chain) === watch.signature) {
        watch.chain = next.chain
        continue
      }
      this.#watches.delete(network)
      await watch.stop()
    }
    if (!this.#started) return
    for (const [network, { chain, family }] of wanted) {
      if (this.#watches.has(network)) continue
      const watch = new NetworkWatch(chain, family)
      this.#watches.set(network, watch)
      watch.start()
    }
  }

  /**
   * Stops every watch (closing push endpoints) and waits, up to
   * `timeoutMs`, for the scans in hand (a scan cut short by the exit saves
   * nothing: its lease runs out and the next process scans again).
   */
  async stop(timeoutMs = 15_000) {
    this.#started = false
    const stopping = (async () => {
      await this.#syncing?.catch(() => {})
      const watches = [...this.#watches.values()]
      this.#watches.clear()
      await Promise.all(watches.map((watch) => watch.stop()))
    })()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      stopping,
      new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ])
    clearTimeout(timer)
  }

  state(network: string): WatchState | null {
    return this.#watches.get(network)?.state ?? null
  }
}

const chainWatch = new ChainWatch()
export default chainWatch
