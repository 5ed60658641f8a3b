/*
| The three kinds of request bench/memory.ts sends, answered the bare way:
| a static JSON document, a lookup by id, a validated POST.
*/
import router from '@adonisjs/core/services/router'
import vine from '@vinejs/vine'

const createValidator = vine.compile(
  vine.object({
    pid: vine.string().maxLength(64),
    order_id: vine.string().maxLength(32),
    currency: vine.string().maxLength(8),
    amount: vine.number().positive(),
    notify_url: vine.string().url({ require_tld: false }),
    signature: vine.string().fixedLength(64),
  })
)

let created = 0

router.get('/payments/native/v1/config', () => ({
  status_code: 200,
  message: 'success',
  data: { networks: [{ network: 'tron', tokens: ['USDT'] }], version: '0.0.0' },
}))

router.get('/pay/check-status/:trade_id', ({ params }) => ({
  status_code: 200,
  message: 'success',
  data: { trade_id: params.trade_id, status: 1 },
}))

router.post('/payments/native/v1/order/create-transaction', async ({ request }) => {
  const fields = await request.validateUsing(createValidator)
  created++
  return {
    status_code: 200,
    message: 'success',
    data: { trade_id: `T${created}`, order_id: fields.order_id },
  }
})
