import { textOr } from '#support/text/catalogue'
import { utcMinute } from '#services/admin/admin_format'
import type { HttpContext } from '@adonisjs/core/http'
import type { I18n } from '@adonisjs/i18n'
import ApiKey from '#models/api_key'
import apiKeyAdmin, { type ApiKeyOverview } from '#services/operators/api_key_admin'
import integrationExamples, {
  NATIVE_CONFIG_PATH,
  NATIVE_CREATE_PATH,
  NATIVE_OPENAPI_PATH,
  NATIVE_QUERY_PATH,
  type IntegrationGuide,
} from '#services/admin/integration_examples'
import testCallbackSender, {
  TEST_HEADER,
  TEST_PREFIX,
  type TestCallbackResult,
} from '#services/admin/test_callback'
import { adminUrl } from '#admin/admin_paths'
import pluginRegistry from '#plugin_host/plugin_registry'
import { AdminNotFound } from '#admin/admin_errors'
import {
  createApiKeyValidator,
  testCallbackValidator,
  updateApiKeyValidator,
} from '#validators/admin/api_key_validators'

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

/** Each endpoint of the guide by its path: its name and how it is signed, in the catalogue. */
const ENDPOINT_TEXTS: [path: string, name: string, signed: string][] = [
  [NATIVE_CREATE_PATH, 'create', 'hmac'],
  [NATIVE_QUERY_PATH, 'query', 'hmac'],
  [NATIVE_CONFIG_PATH, 'config', 'none'],
  [NATIVE_OPENAPI_PATH, 'openapi', 'none'],
]

/** The migration steps by their `what`: which of what / before / after are words to translate. */
const STEP_TEXTS: Record<string, { key: string; before?: true; after?: true }> = {
  'Create URL': { key: 'create_url' },
  'pid': { key: 'pid', before: true, after: true },
  'currency': { key: 'currency', before: true, after: true },
  'Coin': { key: 'coin', before: true, after: true },
  'Signature': { key: 'signature', before: true, after: true },
  'Receiving address': { key: 'address', after: true },
  'Expiry': { key: 'expiry', before: true, after: true },
  'Callback check': { key: 'callback', before: true, after: true },
}

/**
 * The guide's words (endpoint names, migration steps, plugins' endpoints) in
 * the admin's language. English keeps IntegrationExamples' own words (the
 * service is the reference, and docs/migration.md says the same); another
 * language takes the catalogue's `admin.api_keys.guide.*`, recognising
 * each entry by its path, `what` or call (an entry it does not know stays
 * as the service wrote it). URLs, code and field names are never changed.
 */
function guideIn(guide: IntegrationGuide, i18n: I18n): IntegrationGuide {
  if (i18n.locale === 'en') return guide
  const t = (key: string, values?: Record<string, string>) =>
    i18n.t(`admin.api_keys.guide.${key}`, values)
  return {
    ...guide,
    endpoints: guide.endpoints.map((endpoint) => {
      const known = ENDPOINT_TEXTS.find(([path]) => endpoint.url.endsWith(path))
      if (!known) return endpoint
      return { ...endpoint, name: t(`endpoint.${known[1]}`), signed: t(`signed.${known[2]}`) }
    }),
    createExamples: guide.createExamples.map((example) =>
      example.id === 'shell' ? { ...example, title: t('example_shell') } : example
    ),
    migration: {
      ...guide.migration,
      steps: guide.migration.steps.map((step) => {
        const known = STEP_TEXTS[step.what]
        if (!known) return step
        return {
          what: t(`step.${known.key}`),
          before: known.before ? t(`step.${known.key}_before`) : step.before,
          after: known.after ? t(`step.${known.key}_after`, { pid: guide.pid }) : step.after,
        }
      }),
    },
  }
}

/**
 * The API keys pages: list, create, rotate (the secret on that response
 * only), enable/disable, note and IP allow-list, and the integration page
 * with its examples and the test callback. Every change goes through
 * ApiKeyAdmin, the service of the apikey:* commands.
 */
export default class ApiKeysController {
  constructor(
    protected apiKeys = apiKeyAdmin,
    protected examples = integrationExamples,
    protected testCallbacks = testCallbackSender
  ) {}

  async index({ view }: HttpContext) {
    const overview = await this.apiKeys.overview()
    const keys = overview.map(present)
    return view.render('admin/api_keys/index', { keys })
  }

  async create({ view }: HttpContext) {
    return view.render('admin/api_keys/create')
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
    return view.render('admin/api_keys/secret', {
      key: present(await this.apiKeys.overviewOf(apiKey.pid)),
      secret: apiKey.signingSecret(),
      rotated: false,
    })
  }

  async show({ params, view, i18n }: HttpContext) {
    const key = present(await this.#overview(params.pid, i18n))
    return view.render('admin/api_keys/show', { key })
  }

  async update({ params, request, response, session, i18n }: HttpContext) {
    const input = await request.validateUsing(updateApiKeyValidator)
    await this.apiKeys.update(params.pid, { note: input.note ?? '', ips: [input.ips ?? ''] })
    session.flash('success', i18n.t('admin.api_keys.flash.saved', { pid: params.pid }))
    return response.redirect(keyUrl(params.pid))
  }

  async enable({ params, response, session, i18n }: HttpContext) {
    await this.apiKeys.update(params.pid, { enabled: true })
    session.flash('success', i18n.t('admin.api_keys.flash.enabled', { pid: params.pid }))
    return response.redirect(keyUrl(params.pid))
  }

  async disable({ params, response, session, i18n }: HttpContext) {
    await this.apiKeys.update(params.pid, { enabled: false })
    session.flash('success', i18n.t('admin.api_keys.flash.disabled', { pid: params.pid }))
    return response.redirect(keyUrl(params.pid))
  }

  /** A new secret, on this response only; the old one stops signing at once. */
  async rotate({ params, response, view }: HttpContext) {
    const apiKey = await this.apiKeys.rotate(params.pid)
    response.header('cache-control', 'no-store')
    return view.render('admin/api_keys/secret', {
      key: present(await this.apiKeys.overviewOf(apiKey.pid)),
      secret: apiKey.signingSecret(),
      rotated: true,
    })
  }

  async integration({ params, view, session, i18n }: HttpContext) {
    const key = present(await this.#overview(params.pid, i18n))
    // The plugins' sections are written in the admin's language by the plugins themselves.
    const guide = guideIn(
      await this.examples.forKey(key.pid, { i18n: i18n.locale === 'en' ? undefined : i18n }),
      i18n
    )
    const formats = this.testCallbacks.formatsFor(key)
    const result = session.flashMessages.get('testCallback') as TestCallbackResult | undefined
    return view.render('admin/api_keys/integration', {
      key,
      guide,
      formatOptions: formats.map((name) => {
        // The core's native, or the format's plugin's own words (lang/<locale>/admin.json).
        const plugin = pluginRegistry.pluginOfCallbackFormat(name)
        const own = plugin
          ? `plugins.${plugin.name}.admin.integration.format`
          : `admin.api_keys.integration.format_${name}`
        return {
          value: name,
          label: textOr(i18n, own, name),
        }
      }),
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

  async #overview(pid: string, i18n: I18n): Promise<ApiKeyOverview> {
    if (!(await ApiKey.findBy('pid', pid)))
      throw new AdminNotFound(i18n.t('admin.api_keys.flash.not_found', { pid }))
    return this.apiKeys.overviewOf(pid)
  }
}
