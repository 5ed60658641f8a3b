import type { HttpContext } from '@adonisjs/core/http'
import dashboardStats from '#services/admin/dashboard_stats'
import { dashboardView } from '#services/admin/dashboard_presenter'
import { healthCard } from '#services/admin/health_card'
import { relativeTime } from '#services/admin/admin_format'
import doctor, { type DashboardHealth } from '#services/doctor/doctor'

/** The console's home: the gateway at a glance (figures read fresh at each load, days in UTC). */
export default class DashboardController {
  constructor(protected stats = dashboardStats) {}

  async show({ view, auth, i18n }: HttpContext) {
    // The health checks name settings and secrets' state: for admins only (viewers cannot act on them).
    const isAdmin = auth.use('web').user?.role === 'admin'
    const [figures, health] = await Promise.all([
      this.stats.read({ timeZone: 'UTC' }),
      isAdmin ? doctor.forDashboard() : Promise.resolve(null),
    ])
    return view.render('admin/dashboard/index', {
      dash: dashboardView(figures, i18n),
      health: health ? this.#healthCard(health, i18n) : null,
    })
  }

  /**
   * The health card in the admin's words: its badges and the note on the
   * live checks. The checks' own titles, findings and fixes are the
   * doctor's (shared with `node ace doctor`): English.
   */
  #healthCard(health: DashboardHealth, i18n: HttpContext['i18n']) {
    const card = healthCard(health)
    return {
      ...card,
      items: card.items.map((item) => ({
        ...item,
        label: i18n.t(
          item.tone === 'danger'
            ? 'admin.dashboard.health.problem'
            : 'admin.dashboard.health.warning'
        ),
      })),
      liveNote:
        health.liveCheckedAt === null
          ? i18n.t('admin.dashboard.health.checking')
          : i18n.t('admin.dashboard.health.checked', {
              ago: relativeTime(health.liveCheckedAt, health.generatedAt, i18n),
            }),
    }
  }
}
