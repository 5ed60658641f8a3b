import { hexDigestsEqual, md5Hex } from '#support/crypto/signing'

/** The fields of a notification's signature, in the provider's fixed order. */
export const NOTIFICATION_SIGN_ORDER = [
  'code',
  'data[order_id]',
  'data[unique_id]',
  'data[pay_user_id]',
  'data[amount]',
  'data[coin]',
  'data[status]',
  'data[type]',
  'id',
  'status',
] as const

const present = (value: string | undefined): value is string => value !== undefined && value !== ''

/**
 * Request sign: every non-empty field but `sign`, sorted by name, joined as
 * name=value with & (values not URL-encoded), then `&token=<shop token>`;
 * MD5, upper-case hex.
 */
export function providerRequestSign(fields: Record<string, string>, shopToken: string): string {
  const text = Object.keys(fields)
    .filter((name) => name !== 'sign' && present(fields[name]))
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((name) => `${name}=${fields[name]}`)
    .join('&')
  return md5Hex(`${text}&token=${shopToken}`).toUpperCase()
}

/** Notification sign: the fixed field order above, same joining and token. */
export function providerNotificationSign(
  fields: Record<string, string>,
  shopToken: string
): string {
  const text = NOTIFICATION_SIGN_ORDER.filter((name) => present(fields[name]))
    .map((name) => `${name}=${fields[name]}`)
    .join('&')
  return md5Hex(`${text}&token=${shopToken}`)
}

/**
 * A notification is authentic when its `sign` matches the notification
 * scheme, or else the request scheme (both compared case-insensitively, in
 * constant time).
 */
export function notificationSignatureValid(
  fields: Record<string, string>,
  shopToken: string
): boolean {
  const given = fields.sign
  if (!present(given)) return false
  return (
    hexDigestsEqual(providerNotificationSign(fields, shopToken), given) ||
    hexDigestsEqual(providerRequestSign(fields, shopToken).toLowerCase(), given)
  )
}
