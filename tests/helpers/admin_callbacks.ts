import db from '@adonisjs/lucid/services/db'
import type { AdminAgent } from '#tests/helpers/admin'

/** The console's callbacks pages: callbacks in the states they list, their forms sent as the pages send them. */

/** The order's callback given up after 7 attempts (status failed), as the deliverer leaves it. */
export async function giveUpCallback(order: { id: number }) {
  await db.from('callbacks').where('order_id', order.id).update({ status: 'failed', attempts: 7 })
}

/** The list of failed callbacks, then its "redeliver all" form sent (the other filters empty). */
export async function redeliverFailed(agent: AdminAgent) {
  await agent.get('/callbacks?status=failed')
  return agent.post('/callbacks/redeliver', {
    status: 'failed',
    pid: '',
    network: '',
    from: '',
    to: '',
    q: '',
  })
}
