/*
 * The branding page's preview follows the site fields as the admin types
 * (the server renders it from the saved values; without script it simply
 * shows those). The checks are the cashier's own (app/cashier/site_look.ts):
 * what the cashier would refuse, the preview does not show either.
 */
(function () {
  'use strict'

  var preview = document.querySelector('[data-brand-preview]')
  var form = document.getElementById('settings-form')
  if (!preview || !form) return

  var COLOR = /^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{1,20})$/
  var SAFE_URL = /^https?:\/\/[^\s"'()<>\\]+$/
  var ROOT_PATH = /^\/[^/\s"'<>\\][^\s"'<>\\]*$/
  var MAILTO = /^mailto:[^\s"'<>\\]+$/

  function part(name) {
    return preview.querySelector('[data-preview="' + name + '"]')
  }

  function input(key) {
    return form.elements.namedItem(key.replace(/\./g, '__'))
  }

  function value(key) {
    var field = input(key)
    return field && typeof field.value === 'string' ? field.value.trim() : ''
  }

  function update() {
    part('name').textContent = value('site.cashier_name')
    part('title').textContent = value('site.website_title')

    var logo = value('site.logo_url')
    var logoImage = part('logo')
    if (SAFE_URL.test(logo) || ROOT_PATH.test(logo)) {
      if (logoImage.getAttribute('src') !== logo) logoImage.setAttribute('src', logo)
      logoImage.hidden = false
    } else {
      logoImage.hidden = true
    }

    var support = value('site.support_link')
    part('support').hidden = !(SAFE_URL.test(support) || MAILTO.test(support))

    // CSSOM, not a style attribute: the console's CSP allows no inline style.
    // "initial" makes the variable unset, so the cashier's default applies
    // (not the saved value of the page's <style> block).
    var color = value('site.background_color')
    preview.style.setProperty('--page-bg', COLOR.test(color) ? color : 'initial')
    var image = value('site.background_image_url')
    preview.style.setProperty('--page-bg-image', SAFE_URL.test(image) ? 'url("' + image + '")' : 'initial')
  }

  form.addEventListener('input', update)
  form.addEventListener('change', update)
  update()
})()
