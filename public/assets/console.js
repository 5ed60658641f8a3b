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
    button.addEventListener('click', function () {
      navigator.clipboard.writeText(target.textContent.trim()).then(
        function () {
          button.textContent = 'Copied'
          setTimeout(function () { button.textContent = label }, 1600)
        },
        function () {
          button.textContent = 'Select and copy'
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
