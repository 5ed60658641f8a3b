import type { HttpContext } from '@adonisjs/core/http'
import { orderByTradeId } from '#services/order_lookup'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { publicConfig } from '#services/public_config'
import { cashierPage, embeddedJson } from '#cashier/cashier_page'
import { cashierAssets } from '#cashier/cashier_assets'
import { setCashierHeaders } from '#cashier/page_headers'
import { siteLook } from '#cashier/site_look'
import {
  LANGUAGE_COOKIE,
  chooseLanguage,
  isLanguage,
  languageChoices,
  translator,
} from '#cashier/languages'

const ONE_YEAR = 365 * 24 * 3600

/**
 * GET /cashier/:trade_id: the payer's page. Rendered complete on the
 * server from the order (amount, address, QR, countdown, state), then the
 * script keeps it current through the public cashier endpoints.
 */
export default class CashierPageController {
  async show(ctx: HttpContext) {
    const { request, response, view } = ctx
    const asked = request.qs().lang
    const language = chooseLanguage(request, asked)
    if (isLanguage(asked)) {
      response.plainCookie(LANGUAGE_COOKIE, language, {
        encode: false,
        maxAge: ONE_YEAR,
        sameSite: 'lax',
        httpOnly: true,
        path: '/',
      })
    }
    const nonce = setCashierHeaders(ctx)
    const assets = cashierAssets()

    let order
    try {
      order = await orderByTradeId(ctx.params.trade_id)
    } catch (error) {
      if (!(error instanceof BusinessError) || error.businessCode !== ErrorCode.ORDER_NOT_FOUND)
        throw error
      const { site } = await publicConfig()
      const look = siteLook(site)
      const t = translator(language)
      response.status(404)
      return view.render('pages/cashier_not_found', {
        language,
        t,
        languages: languageChoices(),
        look,
        nonce,
        assets,
        title: t('notfound.title'),
      })
    }

    const page = await cashierPage(order, language)
    return view.render('pages/cashier', {
      ...page,
      nonce,
      assets,
      scriptJson: embeddedJson(page.script),
    })
  }
}
