import { args, flags } from '@adonisjs/core/ace'
import { OperatorCommand, OperatorError } from '#support/cli/operator_command'

export default class NotificationsTest extends OperatorCommand {
  static commandName = 'notifications:test'
  static description =
    'Send a test notification through one channel now, to each of its targets, and print what each answered'

  @args.string({ description: 'Channel name (telegram, email, webhook …)' })
  declare channel: string

  @flags.number({ description: 'Seconds to wait for the outcome', default: 30 })
  declare wait: number

  async execute() {
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const { default: notificationChannels } = await import('#notifications/channel_registry')
    const { raiseNotification } = await import('#notifications/notifier')
    const { NotificationDeliverer } = await import('#notifications/notification_delivery')
    const { aceActor, actorLabel } = await import('#services/audit/audit_context')
    const channel = notificationChannels.get(this.channel)
    if (!channel) {
      const names = notificationChannels.all().map((known) => known.name)
      throw new OperatorError(
        `Unknown notification channel "${this.channel}" (${names.length > 0 ? `on: ${names.join(', ')}` : 'none is on'})`
      )
    }
    const problem = await channel.problem()
    if (problem) throw new OperatorError(`The channel "${channel.name}" cannot send: ${problem}`)

    const eventId = await raiseNotification(
      'notifications.test',
      { by: actorLabel(aceActor()) },
      { only: { channel: channel.name }, force: true }
    )
    // Sent from here rather than left to the worker: the operator sees the answer.
    const deliverer = new NotificationDeliverer()
    const deadline = Date.now() + this.wait * 1000
    let rows: { target: string; status: string; attempts: number; last_error: string }[] = []
    while (Date.now() < deadline) {
      await deliverer.runOnce(undefined, { eventId: eventId! })
      rows = await db
        .from('notification_deliveries')
        .where('event_id', eventId!)
        .select('target', 'status', 'attempts', 'last_error')
      if (
        rows.length > 0 &&
        rows.every((row) => row.status !== 'pending' || Number(row.attempts) > 0)
      )
        break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    if (rows.length === 0)
      throw new OperatorError(`The channel "${channel.name}" has no target to send to`)
    let failed = 0
    for (const row of rows) {
      if (row.status === 'delivered')
        this.logger.success(`${channel.name} → ${row.target}: delivered`)
      else {
        failed++
        const state =
          row.status === 'pending'
            ? 'not delivered yet (will be retried by the worker)'
            : row.status
        this.logger.error(`${channel.name} → ${row.target}: ${state}: ${row.last_error}`)
      }
    }
    if (failed > 0) this.exitCode = 1
  }
}
