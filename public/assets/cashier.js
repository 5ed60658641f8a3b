/*
 * The cashier page's script. The server renders every view complete; this
 * keeps the page current through the public cashier endpoints only
 * (check-status, switch-network, submit-tx-hash, and payment-progress when
 * the gateway has it): polling, countdown, copy buttons, the selector and
 * the "I have paid" dialog. No framework, no dependency.
 */
(function () {
  'use strict'

  var POLL_MS = 3000
  var MAX_BACKOFF_MS = 30000
  var EXPIRED_POLL_MS = 15000
  /** How long an expired page still watches for a late payment. */
  var EXPIRED_WATCH_MS = 20 * 60 * 1000
  var FAILURES_BEFORE_OFFLINE = 3
  var REDIRECT_SECONDS = 5

  function $(selector) {
    return document.querySelector(selector)
  }

  // The language switcher is a plain GET form; submit it on change.
  var langForm = $('[data-lang-form]')
  if (langForm) {
    langForm.addEventListener('change', function () {
      langForm.submit()
    })
  }

  var dataElement = document.getElementById('cashier-data')
  if (!dataElement) return
  var data = JSON.parse(dataElement.textContent)
  var order = data.order
  var strings = data.strings
  var tradeId = order.trade_id

  function t(key, values) {
    var text = strings[key] || key
    return text.replace(/\{(\w+)\}/g, function (whole, name) {
      return values && name in values ? String(values[name]) : whole
    })
  }

  // Countdowns run on the server's clock: the device's may be off by hours.
  var clockOffset = order.server_time - Date.now()
  function serverNow() {
    return Date.now() + clockOffset
  }

  // ---- views -------------------------------------------------------------
  var views = {}
  Array.prototype.forEach.call(document.querySelectorAll('[data-view]'), function (element) {
    views[element.getAttribute('data-view')] = element
  })
  var current = Object.keys(views).filter(function (name) {
    return !views[name].hidden
  })[0]
  var beforeChoose = null

  function show(name, moveFocus) {
    if (!views[name] || current === name) return
    Object.keys(views).forEach(function (key) {
      views[key].hidden = key !== name
    })
    current = name
    if (moveFocus !== false) {
      var heading = views[name].querySelector('h1')
      if (heading) {
        if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1')
        heading.focus()
      }
    }
  }

  // A polite live region for short confirmations (copied…).
  var announcer = document.createElement('div')
  announcer.className = 'visually-hidden'
  announcer.setAttribute('role', 'status')
  document.body.appendChild(announcer)
  function announce(text) {
    announcer.textContent = ''
    setTimeout(function () {
      announcer.textContent = text
    }, 50)
  }

  // ---- API ---------------------------------------------------------------
  function ApiError(code, message, httpStatus) {
    this.code = code
    this.message = message
    this.httpStatus = httpStatus
  }

  function api(method, path, body) {
    var init = { method: method, headers: { accept: 'application/json' }, cache: 'no-store' }
    if (body) {
      init.headers['content-type'] = 'application/json'
      init.body = JSON.stringify(body)
    }
    return fetch(path, init).then(
      function (response) {
        return response.json().then(
          function (envelope) {
            if (envelope && envelope.status_code === 200) return envelope.data
            throw new ApiError(envelope ? envelope.status_code : response.status, envelope ? envelope.message : '', response.status)
          },
          function () {
            throw new ApiError(response.status, '', response.status)
          }
        )
      },
      function () {
        throw new ApiError('network', '', 0)
      }
    )
  }

  /** A plain sentence in the page's language for an error of the API. */
  function errorText(error) {
    if (error && strings['error.' + error.code]) return strings['error.' + error.code]
    if (error && error.code === 'network') return strings['error.network']
    if (error && error.code === 400 && error.message) return error.message
    return strings['error.generic']
  }

  // ---- countdown ---------------------------------------------------------
  var countdown = $('#countdown')
  var timerBox = $('#timer')
  var timerBar = $('#timer-bar')

  function formatLeft(ms) {
    var total = Math.max(0, Math.ceil(ms / 1000))
    var hours = Math.floor(total / 3600)
    var minutes = Math.floor((total % 3600) / 60)
    var seconds = String(total % 60).padStart(2, '0')
    return hours > 0 ? hours + ':' + String(minutes).padStart(2, '0') + ':' + seconds : minutes + ':' + seconds
  }

  function tick() {
    var left = order.expiration_time - serverNow()
    if (countdown) {
      countdown.textContent = formatLeft(left)
      timerBar.value = Math.max(0, left)
      timerBox.setAttribute('data-tone', left <= 60000 ? 'danger' : left <= 180000 ? 'warn' : 'ok')
    }
    if (left <= 0 && (current === 'pay' || current === 'choose' || current === 'provider')) {
      expire()
    }
  }
  var countdownTimer = setInterval(tick, 1000)
  tick()

  var expiredSince = null
  function expire() {
    if (expiredSince === null) expiredSince = Date.now()
    var dialog = $('#hash-dialog')
    if (dialog && dialog.open) dialog.close()
    show('expired')
  }

  // ---- status polling ----------------------------------------------------
  var failures = 0
  var pollTimer = null
  var finished = false
  var progressAvailable = Boolean(views.confirming)
  var offline = $('#offline')

  function schedule(ms) {
    clearTimeout(pollTimer)
    pollTimer = null
    if (finished || document.hidden) return
    pollTimer = setTimeout(poll, ms)
  }

  function poll() {
    clearTimeout(pollTimer)
    pollTimer = null
    if (finished) return
    api('GET', '/pay/check-status/' + encodeURIComponent(tradeId))
      .then(function (status) {
        failures = 0
        offline.hidden = true
        return applyStatus(status.status)
      })
      .then(
        function () {
          if (expiredSince !== null && Date.now() - expiredSince > EXPIRED_WATCH_MS) finished = true
          schedule(current === 'expired' ? EXPIRED_POLL_MS : POLL_MS)
        },
        function () {
          failures += 1
          if (failures >= FAILURES_BEFORE_OFFLINE) offline.hidden = false
          schedule(Math.min(MAX_BACKOFF_MS, POLL_MS * Math.pow(2, failures)))
        }
      )
  }

  function applyStatus(status) {
    if (status === 2) return paid()
    if (status === 3) {
      if (current !== 'confirming') expire()
      return checkProgress()
    }
    if (status === 1) return checkProgress()
    return null
  }

  /** payment-progress: absent (404) on gateways without it; then no progress is shown. */
  function progress() {
    if (!progressAvailable) return Promise.resolve(null)
    return api('GET', '/pay/payment-progress/' + encodeURIComponent(tradeId)).catch(function (error) {
      if (error.httpStatus === 404) progressAvailable = false
      else throw error
      return null
    })
  }

  function checkProgress() {
    return progress().then(function (info) {
      if (!info) return
      var sighting = info.sighting
      if (sighting) {
        showConfirming(sighting)
      } else if (current === 'confirming') {
        // The transfer vanished (reorganisation): ask for the payment again.
        show(order.expiration_time > serverNow() ? 'pay' : 'expired')
      }
    })
  }

  function showConfirming(sighting) {
    var text = t('confirming.progress', { n: sighting.confirmations, m: sighting.required_confirmations })
    var heading = $('[data-confirming-text]')
    if (heading.textContent !== text) heading.textContent = text
    var bar = $('#confirm-bar')
    bar.max = Math.max(1, sighting.required_confirmations)
    bar.value = Math.min(sighting.confirmations, sighting.required_confirmations)
    var link = $('#confirming-link')
    if (sighting.explorer_url) {
      link.href = sighting.explorer_url
      link.hidden = false
    } else {
      link.hidden = true
    }
    var dialog = $('#hash-dialog')
    if (dialog && dialog.open) dialog.close()
    show('confirming')
  }

  function paid() {
    if (finished) return null
    finished = true
    clearInterval(countdownTimer)
    var dialog = $('#hash-dialog')
    if (dialog && dialog.open) dialog.close()
    show('paid')
    startRedirect()
    return progress().then(function (info) {
      if (info && info.payment) showTransaction(info.payment)
    }, function () {})
  }

  function showTransaction(payment) {
    var row = $('#paid-tx')
    if (!row || !payment.reference) return
    $('#paid-tx-ref').textContent = payment.reference
    var link = $('#paid-tx-link')
    if (payment.explorer_url) {
      link.href = payment.explorer_url
      link.hidden = false
    }
    row.hidden = false
  }

  var redirecting = false
  function startRedirect() {
    var note = $('#redirect-note')
    if (!data.return_path || !note || redirecting) return
    redirecting = true
    var left = REDIRECT_SECONDS
    note.textContent = t('paid.redirect', { seconds: left })
    var timer = setInterval(function () {
      left -= 1
      if (left > 0) {
        note.textContent = t('paid.redirect', { seconds: left })
        return
      }
      clearInterval(timer)
      window.location.assign(data.return_path)
    }, 1000)
  }

  document.addEventListener('visibilitychange', function () {
    if (document.hidden) {
      clearTimeout(pollTimer)
      pollTimer = null
    } else {
      tick()
      poll()
    }
  })

  // ---- copy buttons --------------------------------------------------------
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () {
        return legacyCopy(text)
      })
    }
    return Promise.resolve(legacyCopy(text))
  }

  function legacyCopy(text) {
    var area = document.createElement('textarea')
    area.value = text
    area.setAttribute('readonly', '')
    area.className = 'visually-hidden'
    document.body.appendChild(area)
    area.select()
    try {
      document.execCommand('copy')
    } finally {
      document.body.removeChild(area)
    }
  }

  document.addEventListener('click', function (event) {
    var target = event.target.closest('[data-copy], [data-open-dialog], [data-close-dialog], [data-show-choose], [data-hide-choose], [data-retry]')
    if (!target) return
    if (target.hasAttribute('data-copy')) return onCopy(target)
    if (target.hasAttribute('data-open-dialog')) return openDialog(target.getAttribute('data-open-dialog'))
    if (target.hasAttribute('data-close-dialog')) return target.closest('dialog').close()
    if (target.hasAttribute('data-show-choose')) {
      beforeChoose = current
      return show('choose')
    }
    if (target.hasAttribute('data-hide-choose')) return show(beforeChoose || 'pay')
    if (target.hasAttribute('data-retry')) return poll()
  })

  function onCopy(button) {
    var label = button.querySelector('[data-copy-text]')
    copyText(button.getAttribute('data-copy')).then(function () {
      if (!button.dataset.original) button.dataset.original = label.textContent
      label.textContent = strings['pay.copied']
      button.setAttribute('data-state', 'copied')
      announce(button.getAttribute('data-copied'))
      clearTimeout(button._reset)
      button._reset = setTimeout(function () {
        label.textContent = button.dataset.original
        button.removeAttribute('data-state')
      }, 2000)
    })
  }

  // ---- selector ----------------------------------------------------------------
  var chooseForm = $('#choose-form')
  if (chooseForm) {
    chooseForm.addEventListener('submit', function (event) {
      event.preventDefault()
      var picked = chooseForm.querySelector('input[name="target"]:checked')
      var errorBox = $('#choose-error')
      if (!picked) {
        var first = chooseForm.querySelector('input[name="target"]')
        if (first) first.focus()
        return
      }
      var parts = picked.value.split('|')
      var submit = $('#choose-submit')
      var label = submit.textContent
      submit.disabled = true
      submit.textContent = strings['choose.working']
      errorBox.hidden = true
      api('POST', '/pay/switch-network', { trade_id: tradeId, network: parts[0], token: parts[1] }).then(
        function (next) {
          // The server renders the order it returned: its QR, amount and time.
          window.location.assign('/cashier/' + encodeURIComponent(next.trade_id))
        },
        function (error) {
          submit.disabled = false
          submit.textContent = label
          errorBox.textContent = errorText(error)
          errorBox.hidden = false
        }
      )
    })
  }

  // ---- "I have paid" dialog ----------------------------------------------------
  function openDialog(id) {
    var dialog = document.getElementById(id)
    if (!dialog) return
    $('#hash-result').textContent = ''
    dialog.showModal()
    $('#hash-input').focus()
  }

  var hashForm = $('#hash-form')
  if (hashForm) {
    hashForm.addEventListener('submit', function (event) {
      event.preventDefault()
      var input = $('#hash-input')
      var result = $('#hash-result')
      var reference = input.value.trim()
      if (!reference) {
        input.focus()
        return
      }
      var submit = $('#hash-submit')
      submit.disabled = true
      result.removeAttribute('data-tone')
      result.textContent = strings['hash.checking']
      api('POST', '/pay/submit-tx-hash/' + encodeURIComponent(tradeId), { block_transaction_id: reference }).then(
        function () {
          submit.disabled = false
          result.setAttribute('data-tone', 'success')
          result.textContent = strings['hash.accepted']
          setTimeout(paid, 800)
        },
        function (error) {
          submit.disabled = false
          result.setAttribute('data-tone', 'danger')
          result.textContent = strings['hash.refused'] + ' ' + errorText(error)
          input.focus()
        }
      )
    })
  }

  // ---- start -----------------------------------------------------------------------
  if (current === 'paid') {
    finished = true
    startRedirect()
    progress().then(function (info) {
      if (info && info.payment) showTransaction(info.payment)
    }, function () {})
  } else {
    if (current === 'expired') expiredSince = Date.now()
    poll()
  }
})()
