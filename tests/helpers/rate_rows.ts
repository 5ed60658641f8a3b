import db from '@adonisjs/lucid/services/db'
import { DAY, insertOrders, type OrderRow } from '#tests/helpers/order_rows'

export { DAY }

/** What the rate job records of a pair's sources: those it used, dropped, found stale, saw fail. */
export type RateSources = {
  used: string[]
  dropped: { source: string; price: string; deviation_percent: string }[]
  stale: string[]
  failed: string[]
}

/** A pair's row in rate_current as the rate job leaves it (USDT/CNY unless told). */
export async function insertCurrentRate(fields: {
  token?: string
  fiat?: string
  rate: string | null
  ok: boolean
  reason?: string
  sources: Partial<RateSources>
  computedAt: number
}) {
  await db.table('rate_current').insert({
    token: fields.token ?? 'USDT',
    fiat: fields.fiat ?? 'CNY',
    rate: fields.rate,
    ok: fields.ok,
    reason: fields.reason ?? '',
    sources: JSON.stringify(fields.sources),
    computed_at: fields.computedAt,
  })
}

/**
 * The two pairs the console's rate pages are shown with: USDT/CNY live at
 * 7.2 from binance and okx (`usdt` adds what the job says of the other
 * sources), TRX/USD refused because only 1 fresh source agrees.
 */
export async function insertLiveAndRefusedPairs(
  computedAt: number,
  usdt: Omit<Partial<RateSources>, 'used'> = {}
) {
  await insertCurrentRate({
    rate: '7.2',
    ok: true,
    sources: { used: ['binance', 'okx'], dropped: [], stale: [], failed: [], ...usdt },
    computedAt,
  })
  await insertCurrentRate({
    token: 'TRX',
    fiat: 'USD',
    rate: null,
    ok: false,
    reason: 'only 1 fresh source agrees, 2 needed',
    sources: { used: [], dropped: [], stale: ['binance'], failed: [] },
    computedAt,
  })
}

/** A source's last answer for a pair in rate_answers (USDT/CNY unless told; quoted in the fiat). */
export async function insertRateAnswer(fields: {
  source: string
  token?: string
  fiat?: string
  price: string | null
  quote?: string
  fetchedAt: number
  error?: string
}) {
  const fiat = fields.fiat ?? 'CNY'
  await db.table('rate_answers').insert({
    source: fields.source,
    token: fields.token ?? 'USDT',
    fiat,
    price: fields.price,
    quote: fields.quote ?? fiat,
    fetched_at: fields.fetchedAt,
    error: fields.error ?? '',
  })
}

/** 30 days of USDT/CNY rate history up to `now`: the last rate of each day from `rateOf(daysAgo)`. */
export async function insertMonthOfRates(now: number, rateOf: (daysAgo: number) => string) {
  const history = []
  for (let day = 29; day >= 0; day--)
    history.push({ token: 'USDT', fiat: 'CNY', rate: rateOf(day), at: now - day * DAY })
  await db.table('rate_history').multiInsert(history)
}

/** `count` USDT orders (paid, status 2, unless the row says) as the volume chart reads them. */
export async function insertPaidOrders(
  count: number,
  row: (index: number) => { trade_id: string; paid_at: number; amount: string; status?: number }
) {
  await insertOrders(count, (index) => {
    const paid: Partial<OrderRow> & { paid_at: number; amount: string } = {
      status: 2,
      token: 'USDT',
      ...row(index),
    }
    return paid
  })
}

/**
 * The rates page as the browser checks see it filled: the two pairs (for
 * USDT/CNY kraken dropped for its deviation, coingecko failed), a month of
 * moving rates and `orders.count` paid orders of growing amounts.
 */
export async function fillRatesPage(
  now: number,
  orders: { count: number; prefix: string; paidAt: (index: number) => number }
) {
  await insertLiveAndRefusedPairs(now - 40_000, {
    dropped: [{ source: 'kraken', price: '7.9', deviation_percent: '9.72' }],
    failed: ['coingecko'],
  })
  await insertMonthOfRates(now, (day) => String(7.1 + (day % 5) * 0.03))
  await insertPaidOrders(orders.count, (index) => ({
    trade_id: `${orders.prefix}${index}`,
    paid_at: orders.paidAt(index),
    amount: String(50 + index * 25),
  }))
}
