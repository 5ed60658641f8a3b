import type { DashboardHealth } from '#services/doctor/doctor'
import { worstFirst } from '#services/doctor/doctor'
import { relativeTime } from '#services/admin/admin_format'

/** The dashboard's "Health checks" card: the doctor's warnings and problems, worst first. */
export type HealthCard = {
  items: {
    tone: 'danger' | 'warning'
    label: string
    title: string
    finding: string
    fix: string | null
  }[]
  problems: number
  warnings: number
  /** "Chain endpoints and rates checked 20 s ago", or that they are being checked now. */
  liveNote: string
  liveChecking: boolean
}

export function healthCard(health: DashboardHealth): HealthCard {
  const items = worstFirst(health.results)
    .filter((line) => line.status !== 'ok')
    .map((line) => ({
      tone: line.status === 'problem' ? ('danger' as const) : ('warning' as const),
      label: line.status === 'problem' ? 'Problem' : 'Warning',
      title: line.title,
      finding: line.finding,
      fix: line.fix,
    }))
  return {
    items,
    problems: health.counts.problem,
    warnings: health.counts.warning,
    liveChecking: health.liveCheckedAt === null,
    liveNote:
      health.liveCheckedAt === null
        ? 'The RPC endpoints, the clock and the exchange rates are being checked now: reload in a moment to see them.'
        : `RPC endpoints, clock and exchange rates checked ${relativeTime(health.liveCheckedAt, health.generatedAt)} (at most a minute old); the rest now.`,
  }
}
