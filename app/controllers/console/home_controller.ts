import type { HttpContext } from '@adonisjs/core/http'

/** The console's home (the dashboard replaces this page). */
export default class HomeController {
  async show({ view }: HttpContext) {
    return view.render('console/home/show')
  }
}
