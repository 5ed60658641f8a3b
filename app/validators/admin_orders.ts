import vine from '@vinejs/vine'
import pluginRegistry from '#plugin_host/plugin_registry'

const day = () => vine.date({ formats: ['YYYY-MM-DD'] })

/**
 * The console's order list filters (query string; empty fields are left
 * out before validation). Dates are UTC days, `to` included.
 */
export const orderFiltersValidator = vine.compile(
  vine.object({
    q: vine.string().trim().maxLength(255).optional(),
    status: vine.number().in([1, 2, 3, 4]).optional(),
    network: vine.string().trim().maxLength(32).optional(),
    token: vine.string().trim().maxLength(16).optional(),
    pid: vine.string().trim().maxLength(32).optional(),
    payment_type: vine.enum(() => pluginRegistry.paymentTypes()).optional(),
    from: day().optional(),
    to: day().afterOrSameAs('from').optional(),
    after: vine.string().maxLength(64).optional(),
    before: vine.string().maxLength(64).optional(),
  })
)

/** The mark-paid form. */
export const markPaidValidator = vine.compile(
  vine.object({
    reference: vine.string().trim().minLength(1).maxLength(255),
  })
)
