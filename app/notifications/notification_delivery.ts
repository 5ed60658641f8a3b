import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import settings from '#settings/settings_service'
import notificationChannels from '#notifications/channel_registry'
import type {
  NotificationChannel,
  NotificationMessage,
  SendOutcome,
  Severity,
} from '#notifications/notification_channel'
import { eventDefinition } from '#notifications/notification_events'
import {
  eventSelected,
  onNotificationQueued,
  raiseNotification,
  severityRank,
} from '#notifications/notifier'
import { claimLeases, releaseLeases } from '#support/database/lease'

/** Longest sleep of an idle loop (a delivery queued by another process is seen within it). */
export const NOTIFY_POLL_MS = 1000
/** Deliveries claimed at once. */
const CLAIM_LIMIT = 50
/** Longer than a claim's sends can take (each bounded by its channel's own timeout, about 15 s). */
const LEASE_MS = 10 * 60_000
/** Longest wait between two attempts. */
const MAX_RETRY_DELAY_MS = 15 * 60_000
/** A delivery whose channel's plugin is turned off is looked at again after this long. */
const HELD_MS = 60_000
const HOUR_MS = 3_600_000
/** Events never folded by the hourly cap (they are the fold's own summary, or asked for). */
const NEVER_FOLDED = new Set(['notifications.folded', 'notifications.test'])

type Claimed = {
  id: number
  eventId: number
  channel: string
  target: string
  attempts: number
  event: string
  severity: Severity
  data: Record<string, unknown>
  createdAt: number
}

/** Delay before retry `retry` (1 = first): 10 s × 2^(retry−1), at most 15 min, less up to 20 % at random. */
export function notificationRetryDelayMs(retry: number, random: () => number = Math.random) {
  const capped = Math.min(MAX_RETRY_DELAY_MS, 10_000 * 2 ** (retry - 1))
  return Math.round(capped * (0.8 + 0.2 * random()))
}

/** Minutes since midnight of `at` in `timeZone`. */
function minutesOfDay(at: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(at)
  const hour = Number(parts.find((part) => part.type === 'hour')!.value)
  const minute = Number(parts.find((part) => part.type === 'minute')!.value)
  return hour * 60 + minute
}

/**
 * When quiet hours (`HH:MM-HH:MM` in `timeZone`, possibly past midnight)
 * that contain `at` end, epoch ms; null when `at` is outside them.
 */
export function quietHoursEnd(quiet: string, at: number, timeZone: string): number | null {
  if (!quiet) return null
  const [start, end] = quiet.split('-').map((time) => {
    const [hours, minutes] = time.split(':').map(Number)
    return hours * 60 + minutes
  })
  const now = minutesOfDay(at, timeZone)
  const inside = start < end ? now >= start && now < end : now >= start || now < end
  if (!inside) return null
  const left = (end - now + 1440) % 1440
  const startOfMinute = at - (at % 60_000)
  return startOfMinute + left * 60_000
}

export function renderMessage(delivery: Claimed): NotificationMessage {
  const { title, lines, links } = eventDefinition(delivery.event).render(delivery.data)
  return {
    idempotencyKey: `${delivery.eventId}:${delivery.channel}:${delivery.target}`,
    eventId: delivery.eventId,
    event: delivery.event,
    severity: delivery.severity,
    title,
    lines,
    links,
    data: delivery.data,
    occurredAt: delivery.createdAt,
  }
}

export type NotificationReport = {
  delivered: number
  retrying: number
  failed: number
  folded: number
  postponed: number
}

/**
 * Delivers the notification outbox: claims due deliveries under a lease,
 * applies what is decided at delivery time (the channel muted or in its
 * quiet hours: all but critical events wait; over its hourly cap: folded
 * into one "… and N more"; a stopped target: failed), sends each, one at a
 * time per channel and target (in order, and a rate limit's wait applies
 * to what follows), and records the outcome with the lease released.
 * Channels and targets are sent to side by side: a slow one holds up no
 * other, and nothing here is on the path of orders, scans or callbacks.
 */
export class NotificationDeliverer {
  /** Set while the service stops: a channel's round gives back what it has not sent yet. */
  stopping = false
  readonly worker = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`

  /**
   * Writes the deliveries of raised events: one per channel and target
   * whose rules take the event (on, events, least severity; a test message
   * or a fold's summary goes to its one channel whatever they say), leaving
   * out stopped targets; digest channels' are due at the end of their
   * window. Idempotent (a delivery is unique per event, channel and
   * target), so two workers doing it at once write each delivery once.
   * Returns the number of events handled.
   */
  async fanOut(limit = 200): Promise<number> {
    const events = await db
      .from('notification_events')
      .where('fanned_out', false)
      .orderBy('id')
      .limit(limit)
      .select('id', 'name', 'severity', 'only_channel', 'only_target', 'forced')
    if (events.length === 0) return 0
    const now = Date.now()
    const rows: Record<string, unknown>[] = []
    const stoppedRows: { channel: string; target: string }[] = await db
      .from('notification_targets')
      .select('channel', 'target')
    const stopped = new Set(stoppedRows.map((row) => `${row.channel}\u0000${row.target}`))
    for (const channel of notificationChannels.all()) {
      let targets: string[] | null = null
      const enabled = Boolean(await settings.read(`notify.${channel.name}.enabled`))
      const patterns = (await settings.read(`notify.${channel.name}.events`)) as string[]
      const least = (await settings.read(`notify.${channel.name}.min_severity`)) as Severity
      const digestMinutes = channel.digest ? await channel.digest.minutes() : 0
      const windowMs = digestMinutes * 60_000
      const due = windowMs > 0 ? Math.ceil((now + 1) / windowMs) * windowMs : now
      for (const event of events) {
        if (event.only_channel !== null && event.only_channel !== channel.name) continue
        const forced = Boolean(event.forced)
        if (!forced) {
          if (!enabled || !eventSelected(patterns, event.name)) continue
          if (severityRank(event.severity) < severityRank(least)) continue
        }
        if (targets === null) {
          try {
            targets = await channel.targets()
          } catch (error) {
            logger.error({ err: error, channel: channel.name }, 'notification channel: no targets')
            targets = []
          }
        }
        for (const target of targets) {
          if (event.only_target !== null && event.only_target !== target) continue
          if (stopped.has(`${channel.name}\u0000${target}`)) continue
          rows.push({
            event_id: event.id,
            channel: channel.name,
            target,
            status: 'pending',
            attempts: 0,
            next_attempt_at: due,
            last_error: '',
            summarized: false,
            created_at: now,
            updated_at: now,
          })
        }
      }
    }
    await db.transaction(async (trx) => {
      for (let start = 0; start < rows.length; start += 100)
        await trx
          .knexQuery()
          .table('notification_deliveries')
          .insert(rows.slice(start, start + 100))
          .onConflict(['event_id', 'channel', 'target'])
          .ignore()
      await trx
        .from('notification_events')
        .whereIn(
          'id',
          events.map((event) => event.id)
        )
        .update({ fanned_out: true })
    })
    return events.length
  }

  /** One claim, sent and recorded. Returns how many events and deliveries it handled. */
  async runOnce(
    report?: NotificationReport,
    only: { eventId?: number; channel?: string } = {}
  ): Promise<number> {
    // A channel's own loop leaves the fan-out to the service's main loop.
    let fanned = 0
    if (only.channel === undefined) {
      fanned = await this.fanOut()
      await this.summarizeFolded()
    }
    const now = Date.now()
    const token = `${this.worker}:${randomBytes(6).toString('hex')}`
    const ids = await claimLeases({
      table: 'notification_deliveries',
      token,
      leaseMs: LEASE_MS,
      now,
      scope: (query) => {
        query.where('status', 'pending').where('next_attempt_at', '<=', now)
        if (only.eventId !== undefined) query.where('event_id', only.eventId)
        if (only.channel !== undefined) query.where('channel', only.channel)
      },
      orderBy: 'id',
      limit: CLAIM_LIMIT,
    })
    if (ids.length === 0) return fanned
    const rows = await db
      .from('notification_deliveries as d')
      .join('notification_events as e', 'e.id', 'd.event_id')
      .whereIn('d.id', ids)
      .where('d.locked_by', token)
      .orderBy('d.id')
      .select(
        'd.id',
        'd.event_id',
        'd.channel',
        'd.target',
        'd.attempts',
        'e.name',
        'e.severity',
        'e.data',
        'e.created_at'
      )
    const groups = new Map<string, Claimed[]>()
    for (const row of rows) {
      const claimed: Claimed = {
        id: Number(row.id),
        eventId: Number(row.event_id),
        channel: row.channel,
        target: row.target,
        attempts: Number(row.attempts),
        event: row.name,
        severity: row.severity,
        data: JSON.parse(row.data),
        createdAt: Number(row.created_at),
      }
      const key = `${claimed.channel}\u0000${claimed.target}`
      groups.set(key, [...(groups.get(key) ?? []), claimed])
    }
    await Promise.all(
      [...groups.values()].map((group) =>
        this.#sendGroup(token, group, report).catch((error) =>
          // Not recorded: the lease runs out and they are attempted again.
          logger.error(
            { err: error },
            'notifications: a channel’s deliveries could not be recorded'
          )
        )
      )
    )
    return fanned + rows.length
  }

  async #sendGroup(token: string, group: Claimed[], report?: NotificationReport) {
    const { channel: name, target } = group[0]
    const channel = notificationChannels.get(name)
    if (!channel) {
      const reason = `the channel "${name}" is not available (its plugin is turned off); held`
      return this.#postpone(token, group, Date.now() + HELD_MS, reason, report)
    }
    const stopped = await db.from('notification_targets').where({ channel: name, target }).first()
    if (stopped) {
      for (const delivery of group)
        await this.#record(
          token,
          delivery,
          { status: 'failed', error: `target stopped: ${stopped.reason}` },
          report
        )
      return
    }
    // Muted (notify.<channel>.muted_until, e.g. set by a chat bot's mute command) or quiet hours:
    // all but critical events wait until they end.
    const now = Date.now()
    const mutedUntil = Number(await settings.read(`notify.${name}.muted_until`))
    const quietEnd = quietHoursEnd(
      String(await settings.read(`notify.${name}.quiet_hours`)),
      now,
      String(await settings.get('notify.time_zone'))
    )
    const waitUntil = Math.max(mutedUntil > now ? mutedUntil : 0, quietEnd ?? 0)
    const urgent =
      waitUntil > 0 ? group.filter((delivery) => delivery.severity === 'critical') : group
    if (waitUntil > 0) {
      const later = group.filter((delivery) => delivery.severity !== 'critical')
      if (later.length > 0)
        await this.#postpone(
          token,
          later,
          waitUntil,
          mutedUntil > now ? 'muted' : 'quiet hours',
          report
        )
    }
    if (urgent.length === 0) return

    const digestMinutes = channel.digest ? await channel.digest.minutes() : 0
    if (channel.digest && digestMinutes > 0) {
      const outcome = await this.#attempt(() =>
        channel.digest!.send(urgent.map(renderMessage), target)
      )
      for (const delivery of urgent) await this.#record(token, delivery, outcome, report)
      return
    }

    const cap = Number(await settings.read(`notify.${name}.cap_per_hour`))
    for (let index = 0; index < urgent.length; index++) {
      const delivery = urgent[index]
      if (cap > 0 && !NEVER_FOLDED.has(delivery.event)) {
        const sent = await this.#sentInLastHour(name, target, delivery.event)
        if (sent >= cap) {
          await this.#record(token, delivery, { status: 'folded' }, report)
          continue
        }
      }
      const outcome = await this.#send(channel, delivery)
      const retryAt = await this.#record(token, delivery, outcome, report)
      const rest = urgent.slice(index + 1)
      if (rest.length === 0) return
      if (retryAt !== null) {
        // The target is unavailable (or asked to wait): what follows for it waits as long, unspent.
        await this.#postpone(
          token,
          rest,
          retryAt,
          `after ${outcome.status === 'retry' ? outcome.error : 'a failure'}`,
          report
        )
        return
      }
      if (this.stopping) {
        await this.#postpone(token, rest, Date.now(), 'the worker stopped', report)
        return
      }
    }
  }

  #send(channel: NotificationChannel, delivery: Claimed): Promise<SendOutcome> {
    return this.#attempt(() => channel.send(renderMessage(delivery), delivery.target))
  }

  async #attempt(send: () => Promise<SendOutcome>): Promise<SendOutcome> {
    try {
      return await send()
    } catch (error) {
      return { status: 'retry', error: error instanceof Error ? error.message : String(error) }
    }
  }

  async #sentInLastHour(channel: string, target: string, event: string): Promise<number> {
    const [row] = await db
      .from('notification_deliveries as d')
      .join('notification_events as e', 'e.id', 'd.event_id')
      .where('d.channel', channel)
      .where('d.target', target)
      .where('d.status', 'delivered')
      .where('d.delivered_at', '>', Date.now() - HOUR_MS)
      .where('e.name', event)
      .count('* as count')
    return Number(row.count)
  }

  async #postpone(
    token: string,
    group: Claimed[],
    until: number,
    why: string,
    report?: NotificationReport
  ) {
    await releaseLeases({
      table: 'notification_deliveries',
      token,
      scope: (query) =>
        query.whereIn(
          'id',
          group.map((delivery) => delivery.id)
        ),
      changes: { next_attempt_at: until, last_error: `waiting: ${why}`, updated_at: Date.now() },
    })
    if (report) report.postponed += group.length
  }

  async #record(
    token: string,
    delivery: Claimed,
    outcome: SendOutcome | { status: 'folded' },
    report?: NotificationReport
  ) {
    const now = Date.now()
    // Folded, or paced by the service's rate limit: no attempt is spent.
    const unspent =
      outcome.status === 'folded' || (outcome.status === 'retry' && outcome.rateLimited === true)
    const attempts = unspent ? delivery.attempts : delivery.attempts + 1
    const maxAttempts = await settings.get('notify.max_attempts')
    let changes: Record<string, unknown>
    let counted: keyof NotificationReport
    let retryAt: number | null = null
    if (outcome.status === 'delivered') {
      changes = { status: 'delivered', delivered_at: now, last_error: '' }
      counted = 'delivered'
    } else if (outcome.status === 'folded') {
      changes = { status: 'folded', last_error: 'over the hourly cap: told in a summary' }
      counted = 'folded'
    } else if (outcome.status === 'retry' && attempts < maxAttempts) {
      const delay = outcome.retryAfterMs ?? notificationRetryDelayMs(attempts)
      retryAt = now + delay
      changes = { next_attempt_at: retryAt, last_error: outcome.error }
      counted = 'retrying'
    } else {
      changes = {
        status: 'failed',
        last_error:
          outcome.status === 'retry'
            ? `${outcome.error} (gave up after ${attempts} attempts)`
            : outcome.error,
      }
      counted = 'failed'
    }
    await db.transaction(async (trx) => {
      const held = await releaseLeases(
        {
          table: 'notification_deliveries',
          token,
          scope: (query) => query.where('id', delivery.id),
          changes: { ...changes, attempts, updated_at: now },
        },
        trx
      )
      if (held === 0) return
      if (outcome.status === 'failed' && outcome.stopTarget) {
        await trx
          .knexQuery()
          .table('notification_targets')
          .insert({
            channel: delivery.channel,
            target: delivery.target,
            reason: outcome.error,
            stopped_at: now,
          })
          .onConflict(['channel', 'target'])
          .ignore()
        logger.warn(
          { channel: delivery.channel, target: delivery.target, reason: outcome.error },
          'notification target stopped'
        )
      }
    })
    if (report) report[counted]++
    return retryAt
  }

  /**
   * Folded deliveries are told once their channel has room again within
   * its hourly cap: one notifications.folded event per channel, target and
   * event name, "… and N more", listing the first titles.
   */
  async summarizeFolded() {
    const groups = await db
      .from('notification_deliveries as d')
      .join('notification_events as e', 'e.id', 'd.event_id')
      .where('d.status', 'folded')
      .where('d.summarized', false)
      .groupBy('d.channel', 'd.target', 'e.name')
      .select('d.channel', 'd.target', 'e.name')
      .count('* as count')
    for (const group of groups) {
      const cap = Number(await settings.read(`notify.${group.channel}.cap_per_hour`).catch(() => 0))
      if (cap > 0 && (await this.#sentInLastHour(group.channel, group.target, group.name)) >= cap)
        continue
      await db.transaction(async (trx) => {
        const folded = await trx
          .from('notification_deliveries as d')
          .join('notification_events as e', 'e.id', 'd.event_id')
          .where('d.status', 'folded')
          .where('d.summarized', false)
          .where('d.channel', group.channel)
          .where('d.target', group.target)
          .where('e.name', group.name)
          .orderBy('d.id')
          .select('d.id', 'e.data', 'e.created_at')
        if (folded.length === 0) return
        const ids = folded.map((row) => Number(row.id))
        const changed = await trx
          .from('notification_deliveries')
          .whereIn('id', ids)
          .where('summarized', false)
          .update({ summarized: true, updated_at: Date.now() })
        if (Number(changed) !== ids.length) return
        const definition = eventDefinition(group.name)
        await raiseNotification(
          'notifications.folded',
          {
            event: group.name,
            count: folded.length,
            first_at: Number(folded[0].created_at),
            last_at: Number(folded[folded.length - 1].created_at),
            titles: folded.slice(0, 10).map((row) => definition.render(JSON.parse(row.data)).title),
          },
          { only: { channel: group.channel, target: group.target }, force: true },
          trx
        )
      })
    }
  }
}

/** A loop's pause: until woken or `ms`. */
class Pause {
  #signalled = false
  #signal: (() => void) | null = null

  wake() {
    this.#signalled = true
    const signal = this.#signal
    this.#signal = null
    signal?.()
  }

  /** Clears an earlier wake-up: called as a round starts. */
  reset() {
    this.#signalled = false
  }

  sleep(ms: number): Promise<void> {
    if (this.#signalled) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#signal = null
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
 * The running gateway's notification loops (in each process running jobs,
 * started and stopped with them): one writes the deliveries of raised
 * events (and the fold summaries), woken by each raise in this process; then
 * each channel has a loop of its own that claims and sends only its
 * deliveries, so a channel that hangs (a mail server that never answers)
 * holds up no other. Each polls every NOTIFY_POLL_MS for other processes'
 * events and for retries coming due.
 */
class NotificationDeliveryService {
  readonly deliverer = new NotificationDeliverer()
  #running = false
  #loops: Promise<void>[] = []
  #main = new Pause()
  #channels = new Map<string, Pause>()

  constructor() {
    onNotificationQueued(() => this.wake())
  }

  get running() {
    return this.#running
  }

  start(options: { pollMs?: number } = {}) {
    if (this.#running) return
    this.#running = true
    const pollMs = options.pollMs ?? NOTIFY_POLL_MS
    this.#loops = [
      this.#loop(this.#main, pollMs, async () => {
        const fanned = await this.deliverer.fanOut()
        await this.deliverer.summarizeFolded()
        if (fanned > 0) for (const pause of this.#channels.values()) pause.wake()
        return fanned
      }),
      ...notificationChannels.all().map((channel) => {
        const pause = new Pause()
        this.#channels.set(channel.name, pause)
        return this.#loop(pause, pollMs, () =>
          this.deliverer.runOnce(undefined, { channel: channel.name })
        )
      }),
    ]
    logger.info('notification delivery loops started')
  }

  async stop() {
    if (!this.#running) return
    this.#running = false
    this.deliverer.stopping = true
    this.wake()
    for (const pause of this.#channels.values()) pause.wake()
    await Promise.all(this.#loops)
    this.deliverer.stopping = false
    this.#loops = []
    this.#channels.clear()
    await Promise.allSettled(notificationChannels.all().map((channel) => channel.close?.()))
  }

  /** An event was raised in this process: fan it out now rather than at the next poll. */
  wake() {
    this.#main.wake()
  }

  async #loop(pause: Pause, pollMs: number, round: () => Promise<number>) {
    while (this.#running) {
      pause.reset()
      let handled = 0
      try {
        handled = await round()
      } catch (error) {
        logger.error({ err: error }, 'notification delivery: a round failed; trying again')
      }
      if (handled > 0 || !this.#running) continue
      await pause.sleep(pollMs)
    }
  }
}

export const notificationDelivery = new NotificationDeliveryService()
