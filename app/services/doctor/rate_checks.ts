import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import rateService from '#rates/rate_service'
import { plural, result, type CheckResult } from '#services/doctor/doctor_check'

const TITLE = 'Exchange rates'
/** Currencies merchants priced orders in over this many days count as offered. */
const RECENT_DAYS = 30

/**
 * Every token payers can pay with, in every currency merchants price in
 * (those of the fixed rates and of the last 30 days' orders), has a rate:
 * a fixed one (they do not age: the operator sets them), or a fresh one
 * from the live source, asked now. A live rate is used for
 * rate.cache_ttl_seconds at most (its max age): a source that does not
 * answer now leaves orders in that currency refused once it runs out.
 */
export async function rateChecks(now: number): Promise<CheckResult[]> {
  const sources = await settings.get('rate.sources')
  if (sources.length > 0) return liveSourceChecks(now)
  const since = now - RECENT_DAYS * 86_400_000
  const [tokenRows, fixedRows, currencyRows] = await Promise.all([
    db
      .from('tokens')
      .join('chains', 'chains.network', 'tokens.network')
      .where('tokens.enabled', true)
      .where('chains.enabled', true)
      .whereExists((wallets) =>
        wallets
          .from('wallets')
          .whereColumn('wallets.network', 'tokens.network')
          .where('wallets.enabled', true)
      )
      .distinct('tokens.symbol as symbol'),
    db.from('rates').select('token', 'fiat'),
    db.from('orders').where('created_at', '>=', since).whereNull('parent_id').distinct('currency'),
  ])
  const symbols = [...new Set(tokenRows.map((row) => String(row.symbol).toUpperCase()))].sort()
  const fixed = new Set(
    fixedRows.map((row) => `${String(row.token).toUpperCase()}/${String(row.fiat).toUpperCase()}`)
  )
  const currencies = [
    ...new Set(
      [
        ...fixedRows.map((row) => String(row.fiat)),
        ...currencyRows.map((row) => String(row.currency)),
      ].map((code) => code.toUpperCase())
    ),
  ].sort()
  if (symbols.length === 0)
    return [result('rates', TITLE, 'ok', 'No chain takes payments yet: no rate is needed')]
  if (currencies.length === 0)
    return [result('rates', TITLE, 'ok', 'No fixed rate and no order yet: no currency to check')]

  const url = await settings.get('rate.api_url')
  const ttl = await settings.get('rate.cache_ttl_seconds')
  const results: CheckResult[] = []
  for (const currency of currencies) {
    const missing = symbols.filter((symbol) => !fixed.has(`${symbol}/${currency}`))
    if (missing.length === 0) {
      results.push(
        result(
          'rates',
          TITLE,
          'ok',
          `${currency}: fixed rates for ${symbols.join(', ')}`,
          null,
          currency
        )
      )
      continue
    }
    const fixMissing = `node ace rate:set ${missing[0]} ${currency} <rate>${url === '' ? ', or configure a live source (node ace settings:set rate.api_url <url>)' : ''}`
    if (url === '') {
      results.push(
        result(
          'rates',
          TITLE,
          'problem',
          `${currency}: no rate for ${missing.join(', ')}: orders in ${currency} paid with ${missing.length === 1 ? 'it' : 'them'} are refused (10006)`,
          fixMissing,
          currency
        )
      )
      continue
    }
    let live: Map<string, unknown>
    try {
      const timeoutMs = (await settings.get('rate.timeout_seconds')) * 1000
      live = await rateService.sourceFactory(url, timeoutMs).fetch(currency)
    } catch (error) {
      results.push(
        result(
          'rates',
          TITLE,
          'problem',
          `${currency}: no fresh rate for ${missing.join(', ')}: ${(error as Error).message} (a live rate is used ${ttl} s at most, then orders are refused)`,
          `Check rate.api_url (node ace settings:get rate.api_url) or set fixed rates: node ace rate:set ${missing[0]} ${currency} <rate>`,
          currency
        )
      )
      continue
    }
    const absent = missing.filter((symbol) => !live.has(symbol))
    if (absent.length > 0) {
      results.push(
        result(
          'rates',
          TITLE,
          'problem',
          `${currency}: the live source has no rate for ${absent.join(', ')}`,
          `node ace rate:set ${absent[0]} ${currency} <rate>, or use a source that quotes it`,
          currency
        )
      )
    } else {
      results.push(
        result(
          'rates',
          TITLE,
          'ok',
          `${currency}: ${plural(missing.length, 'live rate')} fresh from the source${missing.length < symbols.length ? ', the others fixed' : ''}`,
          null,
          currency
        )
      )
    }
  }
  return results
}

/**
 * With live sources (rate.sources), what the workers last computed for each
 * pair payers use (rate_current), per currency: nothing is asked here, the
 * workers do that. A pair not priced, refused or not refreshed for longer
 * than its answers may be used is a problem: orders in it are refused.
 */
async function liveSourceChecks(now: number): Promise<CheckResult[]> {
  const { default: rateRefresh } = await import('#rates/rate_refresh')
  const pairs = await rateRefresh.pairs(now)
  if (pairs.length === 0)
    return [
      result('rates', TITLE, 'ok', 'Every pair payers use has a fixed rate (or none is used yet)'),
    ]
  const rows = await db.from('rate_current').select('token', 'fiat', 'ok', 'reason', 'computed_at')
  const current = new Map(rows.map((row) => [`${row.token}|${row.fiat}`, row]))
  const maxAgeMs =
    ((await settings.get('rate.max_age_seconds')) +
      2 * (await settings.get('rate.refresh_seconds'))) *
    1000
  const byCurrency = new Map<string, string[]>()
  for (const pair of pairs) {
    const row = current.get(`${pair.token}|${pair.fiat}`)
    const problem = !row
      ? `${pair.token}: not priced yet (are the workers running?)`
      : !row.ok
        ? `${pair.token}: ${row.reason}`
        : now - Number(row.computed_at) > maxAgeMs
          ? `${pair.token}: last computed ${Math.round((now - Number(row.computed_at)) / 1000)} s ago (are the workers running?)`
          : null
    const list = byCurrency.get(pair.fiat) ?? []
    if (problem) list.push(problem)
    byCurrency.set(pair.fiat, list)
  }
  return [...byCurrency].map(([currency, problems]) =>
    problems.length === 0
      ? result(
          'rates',
          TITLE,
          'ok',
          `${currency}: live rates fresh from the sources`,
          null,
          currency
        )
      : result(
          'rates',
          TITLE,
          'problem',
          `${currency}: no usable live rate: ${problems.join('; ')} (orders in ${currency} paid with them are refused, 10006)`,
          `node ace rate:list shows each source's answers; enable more sources (rate.sources) or set a fixed rate: node ace rate:set <TOKEN> ${currency} <rate>`,
          currency
        )
  )
}
