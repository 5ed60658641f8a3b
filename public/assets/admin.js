/*
 * The console's script: small helps only, every page works without it.
 * - copy buttons ([data-copy] names the element whose text is copied);
 * - an open confirmation closes with Escape.
 */
(function () {
  'use strict'

  document.querySelectorAll('[data-copy]').forEach(function (button) {
    var target = document.getElementById(button.getAttribute('data-copy'))
    if (!target || !navigator.clipboard) return
    button.hidden = false
    var label = button.textContent
    var name = button.getAttribute('aria-label') || label
    // The visible text and the accessible name change together (WCAG 2.5.3).
    function show(text, accessible) {
      button.textContent = text
      button.setAttribute('aria-label', accessible)
    }
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(target.textContent.trim()).then(
        function () {
          show('Copied', 'Copied: ' + name.replace(/^Copy /, ''))
          setTimeout(function () { show(label, name) }, 1600)
        },
        function () {
          show('Select and copy', 'Select and copy: ' + name.replace(/^Copy /, ''))
        }
      )
    })
  })

  document.addEventListener('keydown', function (event) {
    if (event.key !== 'Escape') return
    document.querySelectorAll('details.confirm[open]').forEach(function (details) {
      details.open = false
      var summary = details.querySelector('summary')
      if (summary) summary.focus()
    })
  })
})()
