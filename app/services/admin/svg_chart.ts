/**
 * Small charts drawn on the server as SVG: no script, no library, nothing
 * fetched. Accessible: the <svg> is an image (role="img") named by its
 * <title> and described by a <desc> summing the data up in words; each
 * bar or point carries its own <title> (shown on hover); `chartTable`
 * gives the same data as an HTML table for a "show data" disclosure.
 *
 * Colours come from the stylesheet: the n-th series is drawn with the
 * class `series-<n>` (admin.css gives it a fill / stroke from the design
 * tokens, light and dark) and `chart-<key>`; text and grid use
 * currentColor until the stylesheet says otherwise. No inline style
 * attribute (the console's CSP has no 'unsafe-inline' for styles).
 */

export type ChartSeries = {
  /** Shown in the legend, the summary and the tooltips. */
  name: string
  /** Class suffix: `chart-<key>`; lower-case letters, digits and dashes. The colour is by position (`series-<n>`). */
  key: string
  /** One value per label; negative values are drawn as 0. */
  values: number[]
}

export type ChartInput = {
  /** Unique on the page: the ids of <title> and <desc> derive from it. */
  id: string
  kind: 'bar' | 'line'
  /** The image's accessible name. */
  title: string
  /** One per point, e.g. dates ("14 Jun"). */
  labels: string[]
  series: ChartSeries[]
  /** Replaces the generated summary (<desc>) when given. */
  description?: string
  /** Heading of the labels' column in `chartTable` (default "Day"). */
  labelHeading?: string
  /** Value formatter for axis, tooltips and summary (default: grouped integer or up to 2 decimals). */
  format?: (value: number) => string
  /**
   * The value axis. 'zero': from 0 up to a round top (a bar's length is its
   * value). 'fit': round bounds just around the data's lowest and highest
   * values (`fitAxis`), so that a line's small moves show (an exchange rate
   * between 7.18 and 7.26). Default: 'zero' for bars, 'fit' for lines.
   */
  axis?: 'zero' | 'fit'
  width?: number
  height?: number
}

const ID = /^[A-Za-z][\w-]*$/
const KEY = /^[a-z0-9-]+$/

const MARGIN = { top: 28, right: 8, bottom: 24, left: 44 }
/** Gridlines above the axis's base (0, or a fitted axis's low). */
const TICKS = 4

/** Escapes text for XML and HTML (content and attribute values). */
export function escapeMarkup(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
}

function defaultFormat(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 2 })
}

/** Steps between gridlines, per power of ten. */
const STEP_FACTORS = [1, 2, 2.5, 3, 4, 5, 6, 8, 10]

/** The least round step (1, 2, 2.5, 3, 4, 5, 6 or 8 × 10^n) at least `raw`; whole when asked. */
function niceStep(raw: number, whole: boolean): number {
  const exponent = Math.floor(Math.log10(raw))
  const scaled = (factor: number) =>
    exponent >= 0 ? factor * 10 ** exponent : factor / 10 ** -exponent
  const nice = STEP_FACTORS.map(scaled).find(
    (candidate) => candidate >= raw && (!whole || Number.isInteger(candidate))
  )
  return nice ?? Math.ceil(raw)
}

/**
 * Top of the value axis: TICKS round steps covering `value` (a step of
 * 1, 2, 2.5, 3, 4, 5, 6 or 8 × 10^n; whole steps when the data is whole).
 */
export function niceMax(value: number, whole = Number.isInteger(value)): number {
  if (!(value > 0) || !Number.isFinite(value)) return TICKS
  return niceStep(value / TICKS, whole) * TICKS
}

/** Each side of the data, before rounding out: this share of its range. */
const FIT_MARGIN = 0.05
/** When every value is the same: this share of it each side (±1 %). */
const FLAT_MARGIN = 0.01

/** A float's noise off a tick value (7.120000000000001 → 7.12). */
const tidy = (value: number) => Number(value.toPrecision(12))

/**
 * A value axis fitted to the data: from a round `low` to `high` = low +
 * TICKS round steps, covering `min`..`max` with a small margin (5 % of the
 * range each side; ±1 % of the value when all are equal, ±1 around 0).
 * It does not go below 0 for data that does not. 7.18..7.26 → 7.175..7.275
 * (steps of 0.025).
 */
export function fitAxis(min: number, max: number): { low: number; high: number } {
  if (!Number.isFinite(min) || !Number.isFinite(max) || min > max) return { low: 0, high: TICKS }
  const pad = max > min ? (max - min) * FIT_MARGIN : Math.abs(min) * FLAT_MARGIN || 1
  const wantLow = min >= 0 ? Math.max(0, min - pad) : min - pad
  const wantHigh = max + pad
  let step = niceStep((wantHigh - wantLow) / TICKS, false)
  // Aligning the bottom to the step may leave the top short: the next round step then.
  for (let attempt = 0; attempt < 8; attempt++) {
    const low = tidy(Math.floor(tidy(wantLow / step)) * step)
    const high = tidy(low + step * TICKS)
    if (high >= wantHigh) return { low, high }
    step = niceStep(step * (1 + 1e-9), false)
  }
  return { low: wantLow, high: wantHigh }
}

/** Two decimals at most in coordinates: small output, no visible loss. */
const at = (value: number) => String(Math.round(value * 100) / 100)

function check(input: ChartInput) {
  if (!ID.test(input.id)) throw new TypeError(`chart id "${input.id}" is not a valid id`)
  if (input.series.length === 0) throw new TypeError('a chart needs at least one series')
  for (const series of input.series) {
    if (!KEY.test(series.key))
      throw new TypeError(`series key "${series.key}" must be lower-case letters, digits or dashes`)
    if (series.values.length !== input.labels.length) {
      throw new TypeError(
        `series "${series.name}" has ${series.values.length} values for ${input.labels.length} labels`
      )
    }
  }
}

/** The stylesheet has four series colours; a fifth series takes the first again. */
const SERIES_COLOURS = 4
const seriesClass = (series: ChartSeries, index: number) =>
  `chart-series series-${(index % SERIES_COLOURS) + 1} chart-${series.key}`

const clean = (value: number) => (Number.isFinite(value) && value > 0 ? value : 0)

/** The summary read out after the name: range, and each series' total and peak. */
export function chartSummary(input: ChartInput): string {
  const format = input.format ?? defaultFormat
  if (input.labels.length === 0) return 'No data.'
  const range =
    input.labels.length === 1 ? input.labels[0] : `${input.labels[0]} to ${input.labels.at(-1)}`
  const parts = input.series.map((series) => {
    const values = series.values.map(clean)
    const total = values.reduce((sum, value) => sum + value, 0)
    if (total === 0) return `${series.name}: none.`
    const peak = Math.max(...values)
    const where = input.labels[values.indexOf(peak)]
    return `${series.name}: ${format(total)} in total, highest ${format(peak)} on ${where}.`
  })
  return `${range}. ${parts.join(' ')}`
}

export function renderChart(input: ChartInput): string {
  check(input)
  const format = input.format ?? defaultFormat
  const width = input.width ?? 640
  const height = input.height ?? 220
  const plot = {
    left: MARGIN.left,
    top: MARGIN.top,
    width: width - MARGIN.left - MARGIN.right,
    height: height - MARGIN.top - MARGIN.bottom,
  }
  const bottom = plot.top + plot.height
  const values = input.series.flatMap((series) => series.values.map(clean))
  const fit = (input.axis ?? (input.kind === 'line' ? 'fit' : 'zero')) === 'fit'
  const { low, high } =
    fit && values.length > 0
      ? fitAxis(Math.min(...values), Math.max(...values))
      : {
          low: 0,
          high: niceMax(
            Math.max(0, ...values),
            values.every((value) => Number.isInteger(value))
          ),
        }
  // Inside the plot whatever the value (a fitted axis does not reach 0).
  const y = (value: number) =>
    bottom - Math.min(1, Math.max(0, (clean(value) - low) / (high - low))) * plot.height
  const count = input.labels.length
  const slot = count === 0 ? plot.width : plot.width / count
  const centre = (index: number) => plot.left + slot * index + slot / 2

  const titleId = `${input.id}-title`
  const descId = `${input.id}-desc`
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-${input.kind}" role="img" ` +
      `aria-labelledby="${titleId}" aria-describedby="${descId}" viewBox="0 0 ${width} ${height}" ` +
      `preserveAspectRatio="xMidYMid meet" focusable="false">`,
    `<title id="${titleId}">${escapeMarkup(input.title)}</title>`,
    `<desc id="${descId}">${escapeMarkup(input.description ?? chartSummary(input))}</desc>`,
  ]

  // Gridlines and their values.
  parts.push('<g class="chart-grid" aria-hidden="true">')
  for (let tick = 0; tick <= TICKS; tick++) {
    const value = tidy(low + ((high - low) / TICKS) * tick)
    const lineY = at(y(value))
    parts.push(
      `<line class="grid-line${tick === 0 ? ' grid-base' : ''}" x1="${plot.left}" x2="${plot.left + plot.width}" y1="${lineY}" y2="${lineY}" stroke="currentColor" stroke-opacity="${tick === 0 ? 0.5 : 0.15}"/>`,
      `<text x="${plot.left - 6}" y="${lineY}" text-anchor="end" dominant-baseline="middle" fill="currentColor">${escapeMarkup(format(value))}</text>`
    )
  }
  parts.push('</g>')

  // Labels under the axis: every one when they fit, else every other (the last always).
  const every = count > 8 ? 2 : 1
  parts.push('<g class="chart-labels" aria-hidden="true">')
  input.labels.forEach((label, index) => {
    if ((count - 1 - index) % every !== 0) return
    // Centred under its slot, but never past the image's edges (a Chinese date is wider).
    const half = textWidthOf(label) / 2
    const x = Math.min(Math.max(centre(index), half), width - half)
    parts.push(
      `<text x="${at(x)}" y="${height - 6}" text-anchor="middle" fill="currentColor">${escapeMarkup(label)}</text>`
    )
  })
  parts.push('</g>')

  if (input.kind === 'bar') parts.push(...bars(input, { slot, y, bottom, left: plot.left, format }))
  else parts.push(...lines(input, { y, centre, format }))

  parts.push(...legend(input, width))
  parts.push('</svg>')
  return parts.join('')
}

function bars(
  input: ChartInput,
  geometry: {
    slot: number
    y: (value: number) => number
    bottom: number
    left: number
    format: (value: number) => string
  }
): string[] {
  const { slot, y, bottom, left, format } = geometry
  const groupWidth = slot * 0.8
  const barWidth = groupWidth / input.series.length
  const parts: string[] = []
  input.series.forEach((series, seriesIndex) => {
    parts.push(`<g class="${seriesClass(series, seriesIndex)}">`)
    series.values.forEach((raw, index) => {
      const value = clean(raw)
      const top = y(value)
      const x = left + slot * index + (slot - groupWidth) / 2 + barWidth * seriesIndex
      parts.push(
        `<rect class="chart-bar" x="${at(x)}" y="${at(top)}" width="${at(Math.max(barWidth - 1, 1))}" height="${at(bottom - top)}">` +
          `<title>${escapeMarkup(`${input.labels[index]}: ${series.name} ${format(value)}`)}</title></rect>`
      )
    })
    parts.push('</g>')
  })
  return parts
}

function lines(
  input: ChartInput,
  geometry: {
    y: (value: number) => number
    centre: (index: number) => number
    format: (value: number) => string
  }
): string[] {
  const { y, centre, format } = geometry
  const parts: string[] = []
  input.series.forEach((series, seriesIndex) => {
    const points = series.values
      .map((value, index) => `${at(centre(index))},${at(y(value))}`)
      .join(' ')
    parts.push(`<g class="${seriesClass(series, seriesIndex)}">`)
    parts.push(`<polyline class="chart-line" fill="none" stroke-width="2" points="${points}"/>`)
    series.values.forEach((raw, index) => {
      parts.push(
        `<circle class="chart-point" cx="${at(centre(index))}" cy="${at(y(raw))}" r="3">` +
          `<title>${escapeMarkup(`${input.labels[index]}: ${series.name} ${format(clean(raw))}`)}</title></circle>`
      )
    })
    parts.push('</g>')
  })
  return parts
}

/**
 * About how wide a legend name draws at 11 px: 7 px a Latin character, 12 px
 * a wide one (Chinese, Japanese, Korean, full-width forms), which would
 * otherwise run into the next swatch.
 */
export function textWidthOf(text: string): number {
  let width = 0
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0
    const wide =
      (code >= 0x1100 && code <= 0x115f) ||
      (code >= 0x2e80 && code <= 0xa4cf) ||
      (code >= 0xac00 && code <= 0xd7a3) ||
      (code >= 0xf900 && code <= 0xfaff) ||
      (code >= 0xfe30 && code <= 0xfe4f) ||
      (code >= 0xff00 && code <= 0xff60) ||
      (code >= 0xffe0 && code <= 0xffe6)
    width += wide ? 12 : 7
  }
  return width
}

/** Top right, one swatch and name per series (the summary says the same to a screen reader). */
function legend(input: ChartInput, width: number): string[] {
  const parts: string[] = ['<g class="chart-legend" aria-hidden="true">']
  let x = width - MARGIN.right
  // Laid out right to left, so that the legend ends at the right edge.
  for (let index = input.series.length - 1; index >= 0; index--) {
    const series = input.series[index]
    const textWidth = textWidthOf(series.name)
    x -= textWidth
    parts.push(
      `<text x="${x}" y="14" dominant-baseline="middle" fill="currentColor">${escapeMarkup(series.name)}</text>`
    )
    x -= 16
    parts.push(
      `<rect class="chart-swatch ${seriesClass(series, index)}" x="${x}" y="8" width="12" height="12" rx="2"/>`
    )
    x -= 12
  }
  parts.push('</g>')
  return parts
}

/** The chart's data as a table (caption = the chart's title), for a "show data" disclosure next to it. */
export function chartTable(input: ChartInput): string {
  check(input)
  const format = input.format ?? defaultFormat
  const head = [`<th scope="col">${escapeMarkup(input.labelHeading ?? 'Day')}</th>`]
  for (const series of input.series)
    head.push(`<th scope="col" class="num">${escapeMarkup(series.name)}</th>`)
  const rows = input.labels.map((label, index) => {
    const cells = input.series.map(
      (series) => `<td class="num">${escapeMarkup(format(clean(series.values[index])))}</td>`
    )
    return `<tr><th scope="row">${escapeMarkup(label)}</th>${cells.join('')}</tr>`
  })
  return (
    `<table class="chart-data"><caption>${escapeMarkup(input.title)}</caption>` +
    `<thead><tr>${head.join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`
  )
}
