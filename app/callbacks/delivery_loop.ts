import logger from '@adonisjs/core/services/logger'
import settings from '#settings/settings_service'
import type {
  CallbackDeliverer,
  ClaimedCallback,
  DeliveryReport,
} from '#callbacks/callback_deliverer'

export type DrainProgress = DeliveryReport & { inFlight: number }

/**
 * Longest sleep of an idle loop: a callback enqueued by another process
 * (whose wake() does not reach this one) or freed by an expired lease is
 * picked up within this.
 */
export const POLL_MS = 1000

/** Shortest sleep when something is due but nothing could be claimed (another worker took it): no busy loop. */
const RETRY_MS = 20

/**
 * Delivers callbacks while work is due: keeps up to `callbacks.concurrency`
 * attempts in flight, each independent of the others (no batch waits for
 * its slowest merchant), and claims more as slots free. At most
 * `callbacks.per_host_concurrency` attempts go to one merchant origin at a
 * time (a slot is free again as soon as the merchant's answer is in; the
 * record is written after, with group commit): the claim leaves out origins
 * at their cap, and callbacks of one origin beyond its cap that one claim
 * brought in wait in memory (at most the cap again; their lease covers that
 * wait, see LEASE_MARGIN_MS) or are given back at once, still due; that
 * origin is then claimed for by name, a batch at a time, as it has room. A
 * slow or unreachable merchant therefore ties up at most its cap of slots
 * (and as many waiting), never the others'.
 *
 * Idle, it sleeps until the earliest next_attempt_at (at most POLL_MS)
 * or until wake() (a callback was just enqueued in this process).
 */
export class DeliveryLoop {
  readonly report: DeliveryReport = { claimed: 0, delivered: 0, retrying: 0, failed: 0, held: 0 }
  #running = false
  #done: Promise<DeliveryReport> | null = null
  #inFlight = new Set<Promise<void>>()
  #perOrigin = new Map<string, number>()
  /** Claimed callbacks waiting for their origin's slot, by origin. */
  #waiting = new Map<string, ClaimedCallback[]>()
  #signalled = false
  #signal: (() => void) | null = null
  /**
   * The busy origins of the last claim that came back short: until a
   * wake-up or a poll, claiming again with (at least) the same origins left
   * out would find nothing, so an attempt ending does not trigger one.
   */
  #exhausted: Set<string> | null = null
  /** Origins with more due callbacks than their room when last claimed: claimed for by name. */
  #backlog = new Set<string>()

  constructor(
    readonly deliverer: CallbackDeliverer,
    readonly options: {
      /** Return once nothing is due and nothing is in flight (the ace command); else run until stop(). */
      untilIdle?: boolean
      onProgress?: (progress: DrainProgress) => void
      pollMs?: number
    } = {}
  ) {}

  get running() {
    return this.#running
  }

  /** Attempts in flight now. */
  get inFlight() {
    return this.#inFlight.size
  }

  /** Starts the loop (once); resolves with the report when it ends. */
  run(): Promise<DeliveryReport> {
    if (!this.#done) {
      this.#running = true
      this.#done = this.#loop()
    }
    return this.#done
  }

  /** Something may be due now: claim without waiting for the poll. */
  wake() {
    this.#exhausted = null
    this.#notify()
  }

  #notify() {
    this.#signalled = true
    const signal = this.#signal
    this.#signal = null
    signal?.()
  }

  /** Stops claiming, gives back waiting callbacks, and waits for the attempts in flight. */
  async stop() {
    this.#running = false
    this.wake()
    await this.#done
  }

  async #loop(): Promise<DeliveryReport> {
    const pollMs = this.options.pollMs ?? POLL_MS
    while (this.#running) {
      this.#signalled = false
      let sleepMs = pollMs
      try {
        const step = await this.#fill()
        if (step === 'again') continue
        if (step === 'idle') {
          if (this.options.untilIdle) break
          const next = await this.deliverer.nextDueAt()
          if (next !== null) sleepMs = Math.min(pollMs, Math.max(RETRY_MS, next - Date.now()))
        }
      } catch (error) {
        logger.error({ err: error }, 'callback delivery loop: claiming failed; trying again')
      }
      await this.#sleep(sleepMs)
    }
    this.#running = false
    await this.#giveBackWaiting()
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight])
    this.#progress(true)
    return this.report
  }

  /**
   * One claim into the free slots. 'again': the claim was full, more may be
   * due; 'busy': attempts are in flight (one ending wakes the loop);
   * 'idle': nothing due for this worker and nothing in flight.
   */
  async #fill(): Promise<'again' | 'busy' | 'idle'> {
    const concurrency = await settings.get('callbacks.concurrency')
    const perHost = await settings.get('callbacks.per_host_concurrency')
    this.#startWaiting(perHost)
    let free = concurrency - this.#inFlight.size - this.#waitingCount()
    // While most slots are busy, claim in batches rather than one row per ended attempt.
    const batch = Math.max(1, Math.min(perHost, Math.floor(concurrency / 4)))

    // Origins known to have more due than their room are claimed for by
    // name, a batch at a time, so one busy merchant's backlog is never
    // claimed only to be given back.
    for (const origin of [...this.#backlog]) {
      const room =
        2 * perHost - (this.#perOrigin.get(origin) ?? 0) - (this.#waiting.get(origin)?.length ?? 0)
      const want = Math.min(room, free)
      if (want < batch) continue
      const claimed = await this.deliverer.claim(want, { onlyOrigin: origin })
      await this.#place(claimed, perHost)
      free -= claimed.length
      if (claimed.length < want) this.#backlog.delete(origin)
    }

    const active = () => (this.#inFlight.size > 0 || this.#waitingCount() > 0 ? 'busy' : 'idle')
    if (free <= 0 || (this.#inFlight.size > 0 && free < batch)) return active()
    const busyOrigins = [...this.#perOrigin]
      .filter(([, count]) => count >= perHost)
      .map(([origin]) => origin)
    const leftOut = [...new Set([...busyOrigins, ...this.#backlog])]
    const exhausted = this.#exhausted
    if (exhausted && [...exhausted].every((origin) => leftOut.includes(origin))) return active()
    this.#exhausted = null

    const claimed = await this.deliverer.claim(free, { busyOrigins: leftOut })
    await this.#place(claimed, perHost)
    // A short claim found everything due outside the origins left out.
    if (claimed.length < free) this.#exhausted = new Set([...leftOut, ...this.#backlog])
    return claimed.length === free ? 'again' : active()
  }

  /**
   * Starts each claimed callback whose origin has a free slot, keeps up to
   * per_host_concurrency more per origin waiting, and gives the rest back
   * (still due; their origin is then claimed for by name).
   */
  async #place(claimed: ClaimedCallback[], perHost: number) {
    const giveBack: ClaimedCallback[] = []
    for (const callback of claimed) {
      const queue = this.#waiting.get(callback.origin) ?? []
      if ((this.#perOrigin.get(callback.origin) ?? 0) < perHost && queue.length === 0)
        this.#start(callback)
      else if (queue.length < perHost) {
        queue.push(callback)
        this.#waiting.set(callback.origin, queue)
      } else {
        giveBack.push(callback)
        this.#backlog.add(callback.origin)
      }
    }
    if (giveBack.length) await this.deliverer.giveBack(giveBack)
  }

  #waitingCount() {
    let count = 0
    for (const queue of this.#waiting.values()) count += queue.length
    return count
  }

  /** Starts waiting callbacks whose origin has a free slot again. */
  #startWaiting(perHost: number) {
    for (const [origin, queue] of this.#waiting) {
      while (queue.length > 0 && (this.#perOrigin.get(origin) ?? 0) < perHost)
        this.#start(queue.shift()!)
      if (queue.length === 0) this.#waiting.delete(origin)
    }
  }

  async #giveBackWaiting() {
    const waiting = [...this.#waiting.values()].flat()
    this.#waiting.clear()
    if (waiting.length === 0) return
    try {
      await this.deliverer.giveBack(waiting)
    } catch (error) {
      // Their leases run out instead: only a delay.
      logger.error({ err: error }, 'callback delivery loop: could not give back waiting callbacks')
    }
  }

  #start(callback: ClaimedCallback) {
    this.report.claimed++
    this.#perOrigin.set(callback.origin, (this.#perOrigin.get(callback.origin) ?? 0) + 1)
    // The merchant's slot is free as soon as its answer is in; the attempt
    // keeps its place among callbacks.concurrency until it is recorded.
    const exchangeOver = () => {
      const left = (this.#perOrigin.get(callback.origin) ?? 1) - 1
      if (left > 0) this.#perOrigin.set(callback.origin, left)
      else this.#perOrigin.delete(callback.origin)
      this.#notify()
    }
    const attempt = this.deliverer
      .deliver(callback, exchangeOver)
      .then((outcome) => {
        this.report[outcome]++
      })
      .catch((error) => {
        // Not recorded (e.g. the database went away mid-write): the lease
        // runs out and the callback is attempted again.
        logger.error(
          { err: error, callback_id: callback.id },
          'callback attempt could not be recorded; it will be retried'
        )
      })
      .finally(() => {
        this.#inFlight.delete(attempt)
        this.#progress()
        this.#notify()
      })
    this.#inFlight.add(attempt)
  }

  #progress(final = false) {
    this.options.onProgress?.({ ...this.report, inFlight: final ? 0 : this.#inFlight.size })
  }

  #sleep(ms: number): Promise<void> {
    if (this.#signalled || !this.#running) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#signal = null
        // A poll: rows may have come due or been freed meanwhile.
        this.#exhausted = null
        resolve()
      }, ms)
      this.#signal = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  }
}

/**
 * The running gateway's delivery loop (one per process running jobs):
 * started and stopped with the background jobs (#jobs/job_worker).
 */
class CallbackDeliveryService {
  #loop: DeliveryLoop | null = null
  #generation = 0

  /** Starts delivering (idempotent; a stop() while starting wins). `pollMs`: for tests. */
  async start(options: { pollMs?: number } = {}) {
    if (this.#loop) return
    const generation = ++this.#generation
    const { default: callbackDeliverer } = await import('#callbacks/callback_deliverer')
    if (this.#loop || generation !== this.#generation) return
    this.#loop = new DeliveryLoop(callbackDeliverer, { pollMs: options.pollMs })
    void this.#loop.run()
    logger.info('callback delivery loop started')
  }

  /** Stops claiming, waits for the attempts in flight, then closes the idle keep-alive connections. */
  async stop() {
    this.#generation++
    const loop = this.#loop
    this.#loop = null
    if (!loop) return
    await loop.stop()
    const { closeCallbackAgents } = await import('#callbacks/safe_http')
    await closeCallbackAgents()
  }

  /** A callback was just committed to the outbox: send it now rather than at the next poll. */
  wake() {
    this.#loop?.wake()
  }

  get running() {
    return this.#loop !== null
  }
}

export const callbackDelivery = new CallbackDeliveryService()
