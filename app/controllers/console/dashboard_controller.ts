import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import { DashboardStats } from '#services/console/dashboard_stats'
import { dashboardView } from '#services/console/dashboard_presenter'
import { healthCard } from '#services/console/health_card'
import doctor from '#services/doctor/doctor'

/** The console's home: the gateway at a glance (figures read fresh at each load, days in UTC). */
@inject()
export default class DashboardController {
  constructor(protected stats: DashboardStats) {}

  async show({ view, auth }: HttpContext) {
    // The health checks name settings and secrets' state: for admins only (viewers cannot act on them).
    const isAdmin = auth.use('web').user?.role === 'admin'
    const [figures, health] = await Promise.all([
      this.stats.read({ timeZone: 'UTC' }),
      isAdmin ? doctor.forDashboard() : Promise.resolve(null),
    ])
    return view.render('console/dashboard/index', {
      dash: dashboardView(figures),
      health: health ? healthCard(health) : null,
    })
  }
}
