import { utcMinute } from '#services/console/console_format'
import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import ApiKey from '#models/api_key'
import { ApiKeyAdmin, type ApiKeyOverview } from '#services/operators/api_key_admin'
import { IntegrationExamples } from '#services/console/integration_examples'
import {
  TEST_HEADER,
  TEST_PREFIX,
  TestCallbackSender,
  type TestCallbackResult,
} from '#services/console/test_callback'
import { adminUrl } from '#console/console_paths'
import { ConsoleNotFound } from '#console/console_errors'
import {
  createApiKeyValidator,
  testCallbackValidator,
  updateApiKeyValidator,
} from '#validators/console/api_key_validators'

/** A moment as the pages show it: UTC to the minute (the full time in the <time> element). */
function when(ms: number | null) {
  if (ms === null) return null
  return { iso: new Date(ms).toISOString(), text: utcMinute(ms) }
}

function keyUrl(pid: string, rest = '') {
  return adminUrl(`/api-keys/${encodeURIComponent(pid)}${rest}`)
}

function present(key: ApiKeyOverview) {
  return {
    ...key,
    url: keyUrl(key.pid),
    integrationUrl: keyUrl(key.pid, '/integration'),
    ordersUrl: `${adminUrl('/orders')}?pid=${encodeURIComponent(key.pid)}`,
    lastUsed: when(key.lastUsedAt),
    created: when(key.createdAt),
  }
}

/**
 * The API keys pages: list, create, rotate (the secret on that response
 * only), enable/disable, note and IP allow-list, and the integration page
 * with its examples and the test callback. Every change goes through
 * ApiKeyAdmin, the service of the apikey:* commands.
 */
@inject()
export default class ApiKeysController {
  constructor(
    protected apiKeys: ApiKeyAdmin,
    protected examples: IntegrationExamples,
    protected testCallbacks: TestCallbackSender
  ) {}

  async index({ view }: HttpContext) {
    const overview = await this.apiKeys.overview()
    const keys = overview.map(present)
    return view.render('console/api_keys/index', { keys })
  }

  async create({ view }: HttpContext) {
    return view.render('console/api_keys/create')
  }

  /** Creates a key; its secret is on this response only (never stored in clear, never shown again). */
  async store({ request, response, view }: HttpContext) {
    const input = await request.validateUsing(createApiKeyValidator)
    const apiKey = await this.apiKeys.create({
      pid: input.pid ? input.pid : undefined,
      note: input.note ?? '',
      ips: [input.ips ?? ''],
    })
    response.header('cache-control', 'no-store')
    return view.render('console/api_keys/secret', {
      key: present(await this.apiKeys.overviewOf(apiKey.pid)),
      secret: apiKey.signingSecret(),
      rotated: false,
    })
  }

  async show({ params, view }: HttpContext) {
    const key = present(await this.#overview(params.pid))
    return view.render('console/api_keys/show', { key })
  }

  async update({ params, request, response, session }: HttpContext) {
    const input = await request.validateUsing(updateApiKeyValidator)
    await this.apiKeys.update(params.pid, { note: input.note ?? '', ips: [input.ips ?? ''] })
    session.flash('success', `Saved the note and allowed IPs of pid ${params.pid}.`)
    return response.redirect(keyUrl(params.pid))
  }

  async enable({ params, response, session }: HttpContext) {
    await this.apiKeys.update(params.pid, { enabled: true })
    session.flash(
      'success',
      `pid ${params.pid} is enabled: its signed requests are accepted again.`
    )
    return response.redirect(keyUrl(params.pid))
  }

  async disable({ params, response, session }: HttpContext) {
    await this.apiKeys.update(params.pid, { enabled: false })
    session.flash(
      'success',
      `pid ${params.pid} is disabled: its requests are refused (401) until you enable it.`
    )
    return response.redirect(keyUrl(params.pid))
  }

  /** A new secret, on this response only; the old one stops signing at once. */
  async rotate({ params, response, view }: HttpContext) {
    const apiKey = await this.apiKeys.rotate(params.pid)
    response.header('cache-control', 'no-store')
    return view.render('console/api_keys/secret', {
      key: present(await this.apiKeys.overviewOf(apiKey.pid)),
      secret: apiKey.signingSecret(),
      rotated: true,
    })
  }

  async integration({ params, view, session }: HttpContext) {
    const key = present(await this.#overview(params.pid))
    const guide = await this.examples.forKey(key.pid)
    const formats = this.testCallbacks.formatsFor(key)
    const result = session.flashMessages.get('testCallback') as TestCallbackResult | undefined
    return view.render('console/api_keys/integration', {
      key,
      guide,
      formatOptions: formats.map((name) => ({
        value: name,
        label:
          name === 'compat' ? 'Compat (GET, MD5, EPay fields)' : 'Native (POST JSON, HMAC-SHA256)',
      })),
      result: result ?? null,
      testPrefix: TEST_PREFIX,
      testHeader: TEST_HEADER,
    })
  }

  /** Sends the test callback; the merchant's answer is shown on the integration page. */
  async testCallback({ params, request, response, session }: HttpContext) {
    const input = await request.validateUsing(testCallbackValidator)
    const result = await this.testCallbacks.send(params.pid, input.url, input.format ?? 'native')
    session.flash('testCallback', result)
    session.flash({ url: input.url, format: result.format })
    return response.redirect(`${keyUrl(params.pid, '/integration')}#test-callback`)
  }

  async #overview(pid: string): Promise<ApiKeyOverview> {
    if (!(await ApiKey.findBy('pid', pid)))
      throw new ConsoleNotFound(`No API key has the pid ${pid}.`)
    return this.apiKeys.overviewOf(pid)
  }
}
