import { Decimal } from '#support/text/money'

/** One source's last answer for a pair, as the refresh stored it. */
export type SourceAnswer = {
  source: string
  /** Fiat per token, already crossed to the pair's fiat; null when the source failed for this pair. */
  price: Decimal | null
  /** When it was fetched (epoch ms). */
  fetchedAt: number
  /** Why there is no price ('' when there is one). */
  error: string
}

export type AggregationRules = {
  /** Answers older than this are not used (ms). */
  maxAgeMs: number
  /** Least number of fresh, agreeing answers. */
  minSources: number
  /** An answer further than this from the median (percent) is dropped. */
  maxDeviationPercent: number
}

export type AggregatedRate =
  | {
      ok: true
      rate: Decimal
      /** The sources whose answers made the median. */
      used: string[]
      /** Answers dropped as outliers, with their distance from the median. */
      dropped: { source: string; price: Decimal; deviationPercent: Decimal }[]
      stale: string[]
      failed: string[]
    }
  | {
      ok: false
      /** Why the pair cannot be priced, in words for the merchant's 10006 and the operator. */
      reason: string
      used: string[]
      dropped: { source: string; price: Decimal; deviationPercent: Decimal }[]
      stale: string[]
      failed: string[]
    }

function median(values: Decimal[]): Decimal {
  const sorted = [...values].sort((a, b) => a.comparedTo(b) ?? 0)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? sorted[middle]
    : sorted[middle - 1].plus(sorted[middle]).dividedBy(2)
}

/**
 * The rate of one pair from its sources' answers: the median of the fresh
 * ones; answers further than maxDeviationPercent from that median are
 * dropped (and flagged), and the median is taken again of the rest. Fewer
 * than minSources answers left (fresh and agreeing) refuses the pair, with
 * the reason. With two answers apart by more than the tolerance, neither
 * can be told right: both are dropped.
 */
export function aggregate(
  answers: SourceAnswer[],
  rules: AggregationRules,
  now: number
): AggregatedRate {
  const failed = answers.filter((answer) => answer.price === null).map((answer) => answer.source)
  const priced = answers.filter((answer) => answer.price !== null)
  const stale = priced
    .filter((answer) => now - answer.fetchedAt > rules.maxAgeMs)
    .map((answer) => answer.source)
  const fresh = priced.filter((answer) => now - answer.fetchedAt <= rules.maxAgeMs)
  const base = { stale, failed }
  if (fresh.length === 0) {
    const why =
      priced.length > 0
        ? `its last prices are older than ${Math.round(rules.maxAgeMs / 1000)} s (${stale.join(', ')})`
        : answers.length > 0
          ? `no source answered (${answers.map((answer) => `${answer.source}: ${answer.error || 'no price'}`).join('; ')})`
          : 'no enabled source prices it'
    return { ok: false, reason: why, used: [], dropped: [], ...base }
  }
  const center = median(fresh.map((answer) => answer.price!))
  const tolerance = new Decimal(rules.maxDeviationPercent)
  const dropped: { source: string; price: Decimal; deviationPercent: Decimal }[] = []
  const kept: SourceAnswer[] = []
  for (const answer of fresh) {
    const deviation = answer.price!.minus(center).abs().dividedBy(center).multipliedBy(100)
    if (deviation.gt(tolerance))
      dropped.push({ source: answer.source, price: answer.price!, deviationPercent: deviation })
    else kept.push(answer)
  }
  const used = kept.map((answer) => answer.source)
  if (kept.length < rules.minSources) {
    const reason =
      dropped.length > 0 && kept.length === 0
        ? `its sources disagree by more than ${rules.maxDeviationPercent} % (${fresh.map((answer) => `${answer.source} ${answer.price!.toFixed()}`).join(', ')})`
        : `${kept.length} fresh agreeing source(s), ${rules.minSources} needed${stale.length ? `; stale: ${stale.join(', ')}` : ''}${failed.length ? `; failed: ${failed.join(', ')}` : ''}${dropped.length ? `; outliers: ${dropped.map((entry) => entry.source).join(', ')}` : ''}`
    return { ok: false, reason, used, dropped, ...base }
  }
  return { ok: true, rate: median(kept.map((answer) => answer.price!)), used, dropped, ...base }
}
