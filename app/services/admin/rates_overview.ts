import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import Rate from '#models/rate'
import { MarkupError, applyMarkup, parseMarkup } from '#rates/rate_markup'
import { Decimal } from '#support/text/money'
import { chartTable, renderChart } from '#services/admin/svg_chart'
import i18nManager from '@adonisjs/i18n/services/main'
import { relativeTime, type FormatI18n } from '#services/admin/admin_format'

/**
 * What the console's Rates page shows (the same as `rate:list`): each live
 * pair with its rate, state, markup, sources and their last answers, the
 * fixed rates, and per pair 30 days of its rate and of its paid volume.
 * Its words (chart titles, summaries, day labels, ages, "not computed
 * yet") are the admin's language's (console.rates.*, console.format.*);
 * the reasons the rate refresh stored in rate_current, the sources' errors
 * and a markup's problem (MarkupError) stay the English they were written in.
 */

const DAY = 86_400_000
const DAYS = 30

type Dropped = { source: string; price: string; deviation_percent: string }

export type SourceAnswer = {
  source: string
  price: string | null
  quote: string
  age: string
  error: string
}

export type PairChart = {
  id: string
  title: string
  svg: string
  table: string
  /**
   * Said under the chart: the range and the last value in words (the rate
   * chart's axis fits the data, see svg_chart's fitAxis, but a reader still
   * wants the figures without hovering each point).
   */
  summary: string | null
}

/** 30 labels: wider than the dashboard's charts so that every other day's label fits. */
const CHART_SIZE = { width: 900, height: 240 }

export type LivePair = {
  token: string
  fiat: string
  /** For ids and field names: `USDT_CNY`. */
  key: string
  rate: string | null
  ok: boolean
  reason: string
  computedAge: string | null
  markup: string | null
  /** The live rate with the markup applied (null: no rate, or no markup). */
  charged: string | null
  /** Why the markup cannot apply (a `-` larger than the rate). */
  markupProblem: string | null
  /** Markups of single API keys on this pair (they win over the pair's for that key's orders). */
  keyMarkups: { pid: string; markup: string; charged: string | null; problem: string | null }[]
  used: string[]
  dropped: Dropped[]
  stale: string[]
  failed: string[]
  answers: SourceAnswer[]
  rateChart: PairChart | null
  volumeChart: PairChart | null
}

export type RatesOverview = {
  sources: string[]
  pairs: LivePair[]
  /** The merchants' API keys by pid, for a markup per key. */
  apiKeys: string[]
  fixed: { token: string; fiat: string; rate: string; updatedAt: number }[]
}

const pairKey = (token: string, fiat: string) => `${token}|${fiat}`

/** UTC day number → "5 Jun" (zh-CN: "6月5日"). */
function dayLabel(day: number, i18n: FormatI18n): string {
  const date = new Date(day * DAY)
  return i18n.t('admin.rates.chart.day', {
    day: String(date.getUTCDate()),
    month: i18n.t(`admin.rates.chart.months.${date.getUTCMonth() + 1}`),
  })
}

function parseSources(text: string | null): {
  used: string[]
  dropped: Dropped[]
  stale: string[]
  failed: string[]
} {
  let parsed: Record<string, unknown> = {}
  try {
    parsed = JSON.parse(text || '{}') ?? {}
  } catch {
    parsed = {}
  }
  const list = (value: unknown) => (Array.isArray(value) ? value.map(String) : [])
  return {
    used: list(parsed.used),
    dropped: Array.isArray(parsed.dropped) ? (parsed.dropped as Dropped[]) : [],
    stale: list(parsed.stale),
    failed: list(parsed.failed),
  }
}

function charged(rate: string | null, markup: string | null) {
  if (!rate || !markup) return { charged: null, problem: null }
  try {
    return { charged: applyMarkup(new Decimal(rate), parseMarkup(markup)).toFixed(), problem: null }
  } catch (error) {
    if (error instanceof MarkupError) return { charged: null, problem: error.message }
    throw error
  }
}

const plain = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 6 })
/** svg_chart's default value format (the volume chart's axis, tooltips and table). */
const chartFigure = (value: number) => value.toLocaleString('en-US', { maximumFractionDigits: 2 })

export class RatesOverviewQuery {
  /** `i18n`: the admin's language (ctx.i18n); English by default. */
  async load(
    now = Date.now(),
    i18n: FormatI18n = i18nManager.locale('en')
  ): Promise<RatesOverview> {
    const today = Math.floor(now / DAY)
    const firstDay = today - DAYS + 1
    const since = firstDay * DAY
    const [sources, fixed, current, markups, answers, history, volumes, apiKeys] =
      await Promise.all([
        settings.get('rate.sources') as Promise<string[]>,
        Rate.query().orderBy('token').orderBy('fiat'),
        db.from('rate_current').orderBy('token').orderBy('fiat'),
        db.from('rate_markups'),
        db.from('rate_answers').orderBy('source'),
        db
          .from('rate_history')
          .where('at', '>=', since)
          .select('token', 'fiat', 'rate', 'at')
          .orderBy('at'),
        db
          .from('orders')
          .where('status', 2)
          .where('paid_at', '>=', since)
          .select('token', 'currency')
          .select(db.raw(`paid_at / ${DAY} as day`))
          .sum('amount as total')
          .groupByRaw(`token, currency, paid_at / ${DAY}`),
        db.from('api_keys').select('id', 'pid').orderBy('pid'),
      ])

    const pidOf = new Map(apiKeys.map((key) => [Number(key.id), String(key.pid)]))
    const markupOf = new Map(
      markups
        .filter((row) => Number(row.api_key_id) === 0)
        .map((row) => [pairKey(row.token, row.fiat), row.markup])
    )
    const keys = new Map<string, { token: string; fiat: string }>()
    for (const row of [...current, ...markups])
      keys.set(pairKey(row.token, row.fiat), { token: row.token, fiat: row.fiat })
    const currentOf = new Map(current.map((row) => [pairKey(row.token, row.fiat), row]))

    const pairs = [...keys.values()]
      .sort((a, b) => a.token.localeCompare(b.token) || a.fiat.localeCompare(b.fiat))
      .map(({ token, fiat }): LivePair => {
        const key = pairKey(token, fiat)
        const row = currentOf.get(key)
        const markup = markupOf.get(key) ?? null
        const rate = row?.rate ?? null
        const marked = charged(row?.ok ? rate : null, markup)
        const id = `${token}_${fiat}`.replace(/[^A-Za-z0-9_]/g, '')
        return {
          token,
          fiat,
          key: id,
          rate,
          ok: Boolean(row?.ok),
          // row.reason: written in English by the rate refresh job (data, not translated).
          reason: row ? row.reason : i18n.t('admin.rates.not_computed'),
          computedAge: row ? relativeTime(Number(row.computed_at), now, i18n) : null,
          markup,
          charged: marked.charged,
          markupProblem: marked.problem,
          keyMarkups: markups
            .filter(
              (entry) =>
                entry.token === token && entry.fiat === fiat && Number(entry.api_key_id) !== 0
            )
            .map((entry) => {
              const own = charged(row?.ok ? rate : null, entry.markup)
              return {
                pid: pidOf.get(Number(entry.api_key_id)) ?? `#${entry.api_key_id}`,
                markup: entry.markup,
                charged: own.charged,
                problem: own.problem,
              }
            })
            .sort((a, b) => a.pid.localeCompare(b.pid)),
          ...parseSources(row?.sources ?? null),
          answers: answers
            .filter((answer) => answer.token === token && answer.fiat === fiat)
            .map((answer) => ({
              source: answer.source,
              price: answer.price ?? null,
              quote: answer.quote || '',
              age: relativeTime(Number(answer.fetched_at), now, i18n),
              error: String(answer.error || '').slice(0, 200),
            })),
          rateChart: rateChart(
            id,
            token,
            fiat,
            history.filter((point) => point.token === token && point.fiat === fiat),
            today,
            i18n
          ),
          volumeChart: volumeChart(
            id,
            token,
            fiat,
            volumes.filter((entry) => entry.token === token && entry.currency === fiat),
            firstDay,
            i18n
          ),
        }
      })

    return {
      sources,
      pairs,
      apiKeys: apiKeys.map((key) => String(key.pid)),
      fixed: fixed.map((rate) => ({
        token: rate.token,
        fiat: rate.fiat,
        rate: rate.rate,
        updatedAt: Number(rate.updatedAt),
      })),
    }
  }
}

/** The pair's rate at the end of each day, from its first sample in the window (gaps keep the last one). */
function rateChart(
  id: string,
  token: string,
  fiat: string,
  points: { rate: string; at: number | string }[],
  today: number,
  i18n: FormatI18n
): PairChart | null {
  if (points.length === 0) return null
  const lastOfDay = new Map<number, number>()
  for (const point of points) lastOfDay.set(Math.floor(Number(point.at) / DAY), Number(point.rate))
  const first = Math.min(...lastOfDay.keys())
  const labels: string[] = []
  const values: number[] = []
  let last = lastOfDay.get(first) ?? 0
  for (let day = first; day <= today; day++) {
    last = lastOfDay.get(day) ?? last
    labels.push(dayLabel(day, i18n))
    values.push(last)
  }
  const summary = i18n.t('admin.rates.chart.rate_summary', {
    from: labels[0],
    to: labels.at(-1),
    min: plain(Math.min(...values)),
    max: plain(Math.max(...values)),
    last: plain(values.at(-1) ?? 0),
    token,
    fiat,
  })
  const input = {
    ...CHART_SIZE,
    id: `rate-${id}`,
    kind: 'line' as const,
    title: i18n.t('admin.rates.chart.rate_title', { token, fiat }),
    labels,
    labelHeading: i18n.t('admin.rates.chart.day_heading'),
    series: [
      { name: i18n.t('admin.rates.chart.rate_series', { token, fiat }), key: 'rate', values },
    ],
    format: plain,
    description: summary,
  }
  return {
    id: input.id,
    title: input.title,
    svg: renderChart(input),
    table: chartTable(input),
    summary,
  }
}

/** Paid orders of the pair per day over the 30 days, in the fiat. */
function volumeChart(
  id: string,
  token: string,
  fiat: string,
  rows: { day: number | string; total: number | string | null }[],
  firstDay: number,
  i18n: FormatI18n
): PairChart | null {
  if (rows.length === 0) return null
  const byDay = new Map<number, number>()
  for (const row of rows) {
    const day = Math.floor(Number(row.day))
    byDay.set(day, (byDay.get(day) ?? 0) + Number(row.total ?? 0))
  }
  const labels: string[] = []
  const values: number[] = []
  for (let day = firstDay; day < firstDay + DAYS; day++) {
    labels.push(dayLabel(day, i18n))
    values.push(byDay.get(day) ?? 0)
  }
  const series = i18n.t('admin.rates.chart.volume_series', { fiat })
  const input = {
    ...CHART_SIZE,
    id: `volume-${id}`,
    kind: 'bar' as const,
    title: i18n.t('admin.rates.chart.volume_title', { token, fiat }),
    labels,
    labelHeading: i18n.t('admin.rates.chart.day_heading'),
    series: [{ name: series, key: 'volume', values }],
    description: volumeSummary(labels, values, series, i18n),
  }
  return {
    id: input.id,
    title: input.title,
    svg: renderChart(input),
    table: chartTable(input),
    summary: null,
  }
}

/**
 * The volume chart's <desc>: what svg_chart's chartSummary says ("5 Jun to
 * 4 Jul. Paid (CNY): 200 in total, highest 150.5 on 2 Jul."), in the
 * admin's language.
 */
function volumeSummary(labels: string[], raw: number[], series: string, i18n: FormatI18n) {
  const values = raw.map((value) => (Number.isFinite(value) && value > 0 ? value : 0))
  const total = values.reduce((sum, value) => sum + value, 0)
  const range = { from: labels[0], to: labels.at(-1), series }
  if (total === 0) return i18n.t('admin.rates.chart.volume_summary_none', range)
  const peak = Math.max(...values)
  return i18n.t('admin.rates.chart.volume_summary', {
    ...range,
    total: chartFigure(total),
    peak: chartFigure(peak),
    day: labels[values.indexOf(peak)],
  })
}
