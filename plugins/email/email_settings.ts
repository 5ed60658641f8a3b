import {
  SettingValueError,
  booleanSetting,
  enumSetting,
  integerSetting,
  listSetting,
  stringSetting,
  type SettingDefinition,
} from '#settings/setting_types'
import { pluginSettings } from '#settings/settings_service'

/**
 * An address as SMTP takes it: no spaces, no brackets, quotes, commas or
 * line breaks (so that neither a header nor the envelope can be bent), a
 * local part and a domain. `root@localhost` passes: a local relay may want it.
 */
export const ADDRESS = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+$/

/** `addr` or `Name <addr>`: the parts of a From setting. */
export function parseFrom(value: string): { name: string; address: string } | null {
  const trimmed = value.trim()
  if (ADDRESS.test(trimmed)) return { name: '', address: trimmed }
  const match = /^([^<>\r\n"]*?)\s*<([^<>]+)>$/.exec(trimmed)
  if (!match || !ADDRESS.test(match[2])) return null
  return { name: match[1].trim(), address: match[2] }
}

function fromSetting(description: string): SettingDefinition<string> {
  return {
    type: 'string',
    default: '',
    description,
    maxLength: 320,
    parse(raw) {
      const value = raw.trim()
      if (value === '') return ''
      if (value.length > 320) throw new SettingValueError('must be at most 320 characters')
      if (!parseFrom(value))
        throw new SettingValueError('must be an address (alerts@example.com) or Name <address>')
      return value
    },
    serialize: (value) => value,
  }
}

export const TLS_MODES = ['starttls', 'tls', 'none'] as const
export type TlsMode = (typeof TLS_MODES)[number]

/** The e-mail channel's own settings (its rules, `notify.email.enabled` …, come from channelRuleSettings). */
export const EMAIL_SETTINGS = {
  'notify.email.host': stringSetting('', 'SMTP server that sends the notifications (host name)', {
    maxLength: 253,
    pattern: /^[A-Za-z0-9._:[\]-]+$/,
  }),
  'notify.email.port': integerSetting(587, 'SMTP port (587 with starttls, 465 with tls)', {
    min: 1,
    max: 65_535,
  }),
  'notify.email.tls': enumSetting<TlsMode>(
    'starttls',
    TLS_MODES,
    'starttls: STARTTLS required (port 587); tls: TLS from the first byte (port 465); none: plain text, only for a relay on this machine'
  ),
  'notify.email.tls_reject_unauthorized': booleanSetting(
    true,
    'Refuse an SMTP server whose certificate is not trusted (turn off only for a relay with a self-signed certificate)'
  ),
  'notify.email.user': stringSetting('', 'SMTP user name (empty: no authentication)', {
    maxLength: 256,
  }),
  'notify.email.password': stringSetting('', 'SMTP password (encrypted at rest)', {
    maxLength: 512,
    secret: true,
  }),
  'notify.email.from': fromSetting(
    'Sender of the notifications: alerts@example.com or Gateway <alerts@example.com>'
  ),
  'notify.email.recipients': listSetting(
    [],
    'Who receives the notifications (comma-separated addresses)',
    {
      item: ADDRESS,
      itemHint: 'an e-mail address',
      maxItems: 50,
    }
  ),
  'notify.email.digest_minutes': integerSetting(
    0,
    'Gather the events of this many minutes into one message (0: one message per event)',
    { min: 0, max: 1440 }
  ),
}

export const emailSettings = pluginSettings(EMAIL_SETTINGS)
