import type { PublicConfig } from '#services/public_config'

/**
 * The `site` settings as the page may use them. Operators type these, but
 * they end up in attributes and CSS: only http(s) URLs (and a root-relative
 * path for the logo) and plain colour values get through.
 */
export type SiteLook = {
  cashierName: string
  websiteTitle: string
  logoUrl: string
  supportLink: string
  /** CSS declarations for the page's own <style> block, or "" */
  backgroundCss: string
  /** The same declarations one by one (the console's branding preview scopes them to its card). */
  declarations: string[]
}

const COLOR = /^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{1,20})$/
/** No quote, bracket, backslash or space: safe inside url("…") and attributes. */
const SAFE_URL = /^https?:\/\/[^\s"'()<>\\]+$/

export function siteLook(site: PublicConfig['site']): SiteLook {
  const logo = site.logo_url.trim()
  const support = site.support_link.trim()
  const color = site.background_color.trim()
  const image = site.background_image_url.trim()
  const declarations: string[] = []
  if (COLOR.test(color)) declarations.push(`--page-bg:${color}`)
  if (SAFE_URL.test(image)) declarations.push(`--page-bg-image:url("${image}")`)
  return {
    cashierName: site.cashier_name.trim(),
    websiteTitle: site.website_title.trim(),
    logoUrl: SAFE_URL.test(logo) || /^\/[^/\s"'<>\\][^\s"'<>\\]*$/.test(logo) ? logo : '',
    supportLink: SAFE_URL.test(support) || /^mailto:[^\s"'<>\\]+$/.test(support) ? support : '',
    backgroundCss: declarations.length > 0 ? `:root{${declarations.join(';')}}` : '',
    declarations,
  }
}
