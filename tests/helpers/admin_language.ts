import type { Assert } from '@japa/assert'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

/** The Accept-Language of a browser set to Chinese. */
export const CHINESE = 'zh-CN,zh;q=0.9'

/**
 * A console user signed in (an admin unless `options` say otherwise) whose
 * browser asks for `language` (Chinese unless told): the agent, and the user
 * it signed in as.
 */
export async function signInReading(
  language: string = CHINESE,
  options: Parameters<typeof createAdminUser>[0] = {}
) {
  const admin = await createAdminUser({ role: 'admin', ...options })
  const agent = await AdminAgent.signIn(admin)
  agent.headers['accept-language'] = language
  return { admin, agent }
}

/** The agent of {@link signInReading}: a signed-in admin whose browser asks for `language`. */
export async function adminReading(
  language: string = CHINESE,
  options: Parameters<typeof createAdminUser>[0] = {}
): Promise<AdminAgent> {
  return (await signInReading(language, options)).agent
}

/**
 * A console page served in `lang`: HTTP 200, `<html lang>` that language, no
 * catalogue key left untranslated, and each of `words` in its text.
 */
export function assertPageIn(
  assert: Assert,
  page: { status: number; text: string },
  lang: string,
  words: string[] = [],
  label?: string
) {
  assert.equal(page.status, 200, label)
  assert.include(page.text, `<html lang="${lang}">`, label)
  assert.notInclude(page.text, 'translation missing', label)
  const text = pageText(page.text)
  for (const expected of words) assert.include(text, expected, label)
}

/** {@link assertPageIn} in Chinese (zh-CN). */
export function assertChinese(
  assert: Assert,
  page: { status: number; text: string },
  words: string[] = [],
  label?: string
) {
  assertPageIn(assert, page, 'zh-CN', words, label)
}
