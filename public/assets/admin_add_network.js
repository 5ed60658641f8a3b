/*
 * The add-network form of the chains page (the form works without it):
 * - only the options of the family chosen are shown, and required; the
 *   others are hidden and disabled, so they are neither sent nor checked;
 * - while the endpoint is tested (up to 15 s) the button says so and is
 *   not pressed twice, and the status line tells screen readers;
 * - after a refusal, the first field in error takes the focus.
 */
(function () {
  'use strict'

  var form = document.getElementById('add-network-form')
  if (!form) return
  var family = form.querySelector('select[name="family"]')
  var groups = form.querySelectorAll('fieldset[data-family]')

  function showFamily() {
    groups.forEach(function (group) {
      var chosen = family && group.getAttribute('data-family') === family.value
      group.hidden = !chosen
      group.disabled = !chosen
      group.querySelectorAll('input').forEach(function (input) {
        input.required = chosen
      })
    })
  }
  if (family) {
    family.addEventListener('change', showFamily)
    showFamily()
  }

  var button = form.querySelector('button[type="submit"]')
  var status = form.querySelector('[data-busy-status]')
  var idle = { label: button ? button.textContent : '', status: status ? status.textContent : '' }

  function busy(on) {
    if (button) {
      button.disabled = on
      button.textContent = on ? button.getAttribute('data-busy-label') || idle.label : idle.label
    }
    if (on) form.setAttribute('aria-busy', 'true')
    else form.removeAttribute('aria-busy')
    // The busy texts come from the page (data-busy-*), in the console's language.
    var busyStatus = button ? button.getAttribute('data-busy-status-text') : null
    if (status) status.textContent = on ? busyStatus || idle.status : idle.status
  }
  form.addEventListener('submit', function () {
    busy(true)
  })
  // Back to this page from the next one (the browser's cache): usable again.
  window.addEventListener('pageshow', function (event) {
    if (event.persisted) busy(false)
  })

  // Back from a refused submit (the page's address ends with #add-network):
  // once loaded, as going to the fragment takes the focus away again.
  var invalid = form.querySelector('[aria-invalid="true"]')
  if (invalid && window.location.hash === '#add-network') {
    window.addEventListener('load', function () {
      invalid.focus()
    })
  }
})()
