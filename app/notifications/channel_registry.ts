import type { NotificationChannel } from '#notifications/notification_channel'

/** The notification channels of the enabled plugins, by name. */
class ChannelRegistry {
  #channels = new Map<string, NotificationChannel>()

  register(channel: NotificationChannel) {
    if (this.#channels.has(channel.name))
      throw new Error(`two notification channels are named "${channel.name}"`)
    this.#channels.set(channel.name, channel)
  }

  get(name: string): NotificationChannel | undefined {
    return this.#channels.get(name)
  }

  all(): NotificationChannel[] {
    return [...this.#channels.values()]
  }
}

const notificationChannels = new ChannelRegistry()
export default notificationChannels
