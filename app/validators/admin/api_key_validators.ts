import vine from '@vinejs/vine'
import type { FieldContext } from '@vinejs/vine/types'
import { OperatorError } from '#support/cli/operator_error'
import { checkPid, normalizeIpAllowlist, normalizeNote } from '#services/operators/api_key_admin'
import { checkCallbackUrl } from '#services/admin/test_callback'
import callbackFormats from '#callbacks/callback_format'

/**
 * The console's API key forms. Each field is checked by the very function
 * the service applies (so the ace commands and the console refuse the same
 * values), here only to show the refusal next to its field.
 */
const serviceCheck = vine.createRule(
  (value: unknown, check: (text: string) => unknown, field: FieldContext) => {
    if (typeof value !== 'string') return
    try {
      check(value)
    } catch (error) {
      if (!(error instanceof OperatorError)) throw error
      // The refusal rides along: the console shows it in the admin's language (admin_errors.ts).
      field.report(
        error.message,
        'service',
        field,
        error.refusal ? { refusal: error.refusal } : undefined
      )
    }
  }
)

const note = () => vine.string().maxLength(2000).use(serviceCheck(normalizeNote)).optional()
const ips = () =>
  vine
    .string()
    .maxLength(20_000)
    .use(serviceCheck((text) => normalizeIpAllowlist([text])))
    .optional()

export const createApiKeyValidator = vine.create({
  // Empty: the next free numeric pid.
  pid: vine
    .string()
    .trim()
    .use(serviceCheck((text) => text === '' || checkPid(text)))
    .optional(),
  note: note(),
  ips: ips(),
})

export const updateApiKeyValidator = vine.create({
  note: note(),
  ips: ips(),
})

export const testCallbackValidator = vine.create({
  url: vine.string().use(serviceCheck(checkCallbackUrl)),
  // A loaded callback format's name (native; a plugin's format while its plugin is on …).
  format: vine
    .string()
    .in(() => callbackFormats.names())
    .optional(),
})
