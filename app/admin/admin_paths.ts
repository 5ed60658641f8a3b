import env from '#start/env'

/** Where the console lives: ADMIN_PATH (default /admin), without a trailing slash. */
export const adminPath: string = env.get('ADMIN_PATH')

/** A console URL: `adminUrl('/orders')` → `/admin/orders`; `adminUrl()` is the home page. */
export function adminUrl(path = '/'): string {
  if (path === '/' || path === '') return adminPath
  return `${adminPath}${path.startsWith('/') ? path : `/${path}`}`
}

/** Whether a request path (no query) belongs to the console. */
export function isAdminPath(url: string): boolean {
  const path = url.split('?')[0]
  return path === adminPath || path.startsWith(`${adminPath}/`)
}

/**
 * A same-console URL to go back to after a form (the `_back` field the form
 * component writes), or null. Anything else (another host, `//evil`, a path
 * outside the console) is refused: no open redirect.
 */
export function safeAdminReturn(value: unknown): string | null {
  if (typeof value !== 'string' || value.length > 2000) return null
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return null
  return isAdminPath(value) ? value : null
}
