import {
  SettingValueError,
  booleanSetting,
  enumSetting,
  integerSetting,
  listSetting,
  type SettingDefinition,
} from '#settings/setting_types'
import { SEVERITIES } from '#notifications/notification_channel'

/** `HH:MM-HH:MM` in notify.time_zone (may run past midnight), or '' for none. */
export function quietHoursSetting(description: string): SettingDefinition<string> {
  return {
    type: 'string',
    default: '',
    description,
    maxLength: 11,
    parse(raw) {
      const value = raw.trim()
      if (value === '') return ''
      const match = /^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$/.exec(value)
      if (!match || value.slice(0, 5) === value.slice(6))
        throw new SettingValueError(
          'must be HH:MM-HH:MM (24-hour clock, two different times) or empty'
        )
      return value
    },
    serialize: (value) => value,
  }
}

/**
 * The rules every channel has, `notify.<channel>.*`: a channel plugin lists
 * them among its settings (`settings: { ...channelRuleSettings('<channel>'), … }`),
 * and the core applies them (app/notifications/).
 */
export function channelRuleSettings(channel: string) {
  return {
    [`notify.${channel}.enabled`]: booleanSetting(false, `Send notifications through ${channel}`),
    [`notify.${channel}.events`]: listSetting(
      ['*'],
      `Events sent through ${channel}: names (order.paid, callback.gave_up …), prefixes (order.*) or * for all`,
      {
        item: /^(\*|[a-z_]+\.\*|[a-z_]+\.[a-z_]+)$/,
        itemHint: 'an event name, a prefix like order.* or *',
      }
    ),
    [`notify.${channel}.min_severity`]: enumSetting(
      'info',
      SEVERITIES,
      `Least severity sent through ${channel} (info, warning, critical)`
    ),
    [`notify.${channel}.quiet_hours`]: quietHoursSetting(
      `Hours when ${channel} sends only critical events, HH:MM-HH:MM in notify.time_zone (the rest waits until they end); empty for none`
    ),
    [`notify.${channel}.cap_per_hour`]: integerSetting(
      20,
      `Messages of one event per hour through ${channel}; the rest are folded into one "and N more" (0: no cap)`,
      { min: 0, max: 10_000 }
    ),
    [`notify.${channel}.muted_until`]: integerSetting(
      0,
      `Until when (epoch ms) ${channel} sends only critical events (a channel's own mute command may set it; 0: not muted)`,
      { min: 0, max: 8_640_000_000_000_000 }
    ),
  } as Record<string, SettingDefinition<any>>
}
