import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import app from '@adonisjs/core/services/app'
import type { Group } from '@japa/runner/core'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { resetDatabase } from '#tests/helpers/database'
import { createAdminUser, type AdminUser } from '#tests/helpers/admin'

/**
 * Debian's Chromium driven by playwright-core (no browser download: `.ci/run`
 * installs the `chromium` package when /usr/bin/chromium is missing).
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export const PHONE = { width: 360, height: 740 }
export const NARROW_PHONE = { width: 320, height: 640 }
export const DESKTOP = { width: 1280, height: 860 }
/** The widths checkAdminPage looks at for the Chinese pages: 320 px and a desktop. */
export const NARROW_AND_DESKTOP = [
  ['320', NARROW_PHONE],
  ['desktop', DESKTOP],
] as const

let shared: Browser | null = null

export async function launchBrowser(): Promise<Browser> {
  if (shared?.isConnected()) return shared
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium (bash .ci/run does it)`
    )
  }
  shared = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return shared
}

export async function closeBrowser() {
  const browser = shared
  shared = null
  if (browser) await browser.close()
}

/**
 * A group of console checks in Chromium: before each test the database is
 * reset, then `prepare` runs; the browser is closed after the group.
 */
export function browserGroup(group: Group, prepare: () => unknown = () => {}) {
  group.each.setup(async () => {
    await resetDatabase()
    await prepare()
  })
  group.teardown(() => closeBrowser())
}

/** A fresh context (own cookies) at a viewport, English unless told. */
export async function newPage(
  viewport = PHONE,
  options: { locale?: string; colorScheme?: 'light' | 'dark'; init?: string } = {}
): Promise<{ context: BrowserContext; page: Page }> {
  const browser = await launchBrowser()
  const context = await browser.newContext({
    viewport,
    locale: options.locale ?? 'en-US',
    colorScheme: options.colorScheme ?? 'light',
    baseURL: process.env.APP_URL,
    permissions: ['clipboard-read', 'clipboard-write'],
  })
  // Nothing leaves this machine: any other host answers from here.
  await context.route(/^https?:\/\/(?!127\.0\.0\.1)/, (route) =>
    route.fulfill({
      status: 200,
      contentType: 'text/html',
      body: '<title>outside</title><p>outside page</p>',
    })
  )
  if (options.init) await context.addInitScript(options.init)
  const page = await context.newPage()
  return { context, page }
}

/** Saves a screenshot under tmp/screenshots/ (git-ignored) and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = app.makePath('tmp', 'screenshots')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}

/** Page width wider than the viewport means a horizontal scroll: a broken layout. */
export async function horizontalOverflow(page: Page): Promise<number> {
  return page.evaluate(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth'
  )
}

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8'
)

export type AxeViolation = {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[] }[]
}

/**
 * axe-core run inside the page (evaluated through the DevTools protocol,
 * so the page's CSP, which forbids inline script, is left as it is).
 * Returns the serious and critical violations.
 */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource)
  const violations: AxeViolation[] = await page.evaluate(`(async () => {
    const result = await axe.run(document, { resultTypes: ['violations'] })
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      nodes: violation.nodes.map((node) => ({ target: node.target })),
    }))
  })()`)
  return violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical'
  )
}

/**
 * Signs in to the console in `page` as a person would: the form, then the
 * 6-digit code when the user has two-factor sign-in on.
 */
export async function adminSignIn(
  page: Page,
  user: { email: string; password: string; totpSecret?: string | null },
  code?: () => string
) {
  const { adminUrl } = await import('#admin/admin_paths')
  await page.goto(adminUrl('/login'))
  await page.getByLabel('E-mail').fill(user.email)
  await page.getByLabel('Password').fill(user.password)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL((url) => !url.pathname.endsWith('/login'))
  if (new URL(page.url()).pathname.endsWith('/login/2fa')) {
    if (!code) throw new Error('this user has two-factor sign-in on: pass a code')
    await page.getByLabel('Code').fill(code())
    await page.getByRole('button', { name: 'Verify and sign in' }).click()
    await page.waitForURL((url) => !url.pathname.includes('/login'))
  }
}

/**
 * The checks every console page gets in a browser: at each width (phone,
 * 320 px, desktop by default) a screenshot `console-<name>-<size>` and no
 * sideways scroll (the widest elements are named when there is one), and
 * at each width no serious or critical axe violation.
 */
export async function checkAdminPage(
  page: Page,
  assert: {
    fail(message: string): never
    deepEqual(actual: unknown, expected: unknown, message?: string): void
  },
  name: string,
  sizes: readonly (readonly [string, { width: number; height: number }])[] = [
    ['phone', PHONE],
    ['320', NARROW_PHONE],
    ['desktop', DESKTOP],
  ]
) {
  for (const [size, viewport] of sizes) {
    await page.setViewportSize(viewport)
    await screenshot(page, `console-${name}-${size}`)
    const overflow = await horizontalOverflow(page)
    if (overflow > 0) {
      const wide = await page.evaluate(
        `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(0, 8).map((e) => e.tagName + '.' + e.className)`
      )
      assert.fail(`${name} overflows at ${size} by ${overflow}px: ${JSON.stringify(wide)}`)
    }
    const violations = await seriousAxeViolations(page)
    assert.deepEqual(violations, [], `axe on ${name} at ${size}: ${JSON.stringify(violations)}`)
  }
}

/**
 * A fresh page at `viewport` (a desktop unless told) signed in to the
 * console as `user` (a new admin unless given). Close its context when done.
 */
export async function adminPage(
  viewport = DESKTOP,
  user?: AdminUser
): Promise<{ context: BrowserContext; page: Page; user: AdminUser }> {
  const admin = user ?? (await createAdminUser())
  const { context, page } = await newPage(viewport)
  try {
    await adminSignIn(page, admin)
  } catch (error) {
    await context.close()
    throw error
  }
  return { context, page, user: admin }
}

/**
 * A desktop page signed in as a new admin who then chose Chinese for the
 * console (as on the account page; the sign-in page stays in the browser's
 * English). Close its context when done.
 */
export async function chineseAdminPage(): Promise<{ context: BrowserContext; page: Page }> {
  const { context, page, user } = await adminPage(DESKTOP, await createAdminUser({ role: 'admin' }))
  user.user.locale = 'zh-CN'
  await user.user.save()
  return { context, page }
}
