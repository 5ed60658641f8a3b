import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import { DashboardStats } from '#services/console/dashboard_stats'
import { dashboardView } from '#services/console/dashboard_presenter'

/** The console's home: the gateway at a glance (figures read fresh at each load, days in UTC). */
@inject()
export default class DashboardController {
  constructor(protected stats: DashboardStats) {}

  async show({ view }: HttpContext) {
    const figures = await this.stats.read({ timeZone: 'UTC' })
    return view.render('console/dashboard/index', { dash: dashboardView(figures) })
  }
}
