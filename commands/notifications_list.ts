import { flags } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class NotificationsList extends OperatorCommand {
  static commandName = 'notifications:list'
  static description =
    'List the notification channels (on, ready, rules, stopped targets) and the last deliveries'

  @flags.number({ description: 'How many of the last deliveries to show (0: none)', default: 20 })
  declare last: number

  async execute() {
    const { default: db } = await import('@adonisjs/lucid/services/db')
    const { default: settings } = await import('#settings/settings_service')
    const { default: notificationChannels } = await import('#notifications/channel_registry')
    const channels = notificationChannels.all()
    if (channels.length === 0) {
      this.logger.info('No notification channel: their plugins (telegram, email, webhook) are off')
      return
    }
    const stopped: { channel: string; target: string; reason: string }[] = await db
      .from('notification_targets')
      .select('channel', 'target', 'reason')
    const rows: string[][] = []
    for (const channel of channels) {
      const read = (key: string) => settings.read(`notify.${channel.name}.${key}`)
      const mutedUntil = Number(await read('muted_until'))
      const problem = await channel.problem()
      rows.push([
        channel.name,
        (await read('enabled')) ? 'yes' : 'no',
        problem === '' ? 'ready' : problem,
        ((await read('events')) as string[]).join(','),
        String(await read('min_severity')),
        String(await read('quiet_hours')) || '-',
        String(await read('cap_per_hour')),
        mutedUntil > Date.now() ? new Date(mutedUntil).toISOString() : '-',
        stopped
          .filter((row) => row.channel === channel.name)
          .map((row) => `${row.target} (${row.reason})`)
          .join('; ') || '-',
      ])
    }
    this.printTable(
      [
        'channel',
        'on',
        'state',
        'events',
        'least severity',
        'quiet hours',
        'cap/hour',
        'muted until',
        'stopped targets',
      ],
      rows
    )

    const counts: { status: string; count: number | string }[] = await db
      .from('notification_deliveries')
      .groupBy('status')
      .select('status')
      .count('* as count')
    this.logger.info(
      `Deliveries: ${
        counts.map((row) => `${Number(row.count)} ${row.status}`).join(', ') || 'none yet'
      }`
    )
    if (this.last <= 0) return
    const last = await db
      .from('notification_deliveries as d')
      .join('notification_events as e', 'e.id', 'd.event_id')
      .orderBy('d.id', 'desc')
      .limit(this.last)
      .select(
        'd.created_at',
        'e.name',
        'e.severity',
        'd.channel',
        'd.target',
        'd.status',
        'd.attempts',
        'd.last_error'
      )
    if (last.length === 0) return
    this.printTable(
      ['raised', 'event', 'severity', 'channel', 'target', 'status', 'attempts', 'last error'],
      last.map((row) => [
        new Date(Number(row.created_at)).toISOString(),
        row.name,
        row.severity,
        row.channel,
        row.target,
        row.status,
        Number(row.attempts),
        String(row.last_error).slice(0, 120),
      ])
    )
  }
}
