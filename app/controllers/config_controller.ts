import type { HttpContext } from '@adonisjs/core/http'
import { publicConfig } from '#services/public_config'
import { ok } from '#support/http/envelope'

export default class ConfigController {
  /** GET /payments/native/v1/config */
  async show(ctx: HttpContext) {
    return ok(ctx, await publicConfig())
  }
}
