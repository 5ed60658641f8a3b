import { test } from '@japa/runner'
import {
  chartSummary,
  chartTable,
  fitAxis,
  niceMax,
  renderChart,
  textWidthOf,
  type ChartInput,
} from '#services/admin/svg_chart'

const week: ChartInput = {
  id: 'orders-chart',
  kind: 'bar',
  title: 'Orders per day',
  labels: ['9 Jun', '10 Jun', '11 Jun', '12 Jun', '13 Jun', '14 Jun', '15 Jun'],
  series: [
    { name: 'Created', key: 'created', values: [3, 0, 5, 12, 4, 0, 2] },
    { name: 'Paid', key: 'paid', values: [2, 0, 4, 9, 4, 0, 1] },
  ],
}

function count(text: string, pattern: RegExp) {
  return (text.match(pattern) ?? []).length
}

test.group('SVG chart', () => {
  test('an axis label stays inside the image: the last Chinese date is not cut at the right edge', ({
    assert,
  }) => {
    // The Rates page's chart: 30 days on 900 px, each label under a slot of 28 px.
    const days = Array.from({ length: 30 }, (_, index) =>
      index < 3 ? `10月${29 + index}日` : `11月${index - 2}日`
    )
    const svg = renderChart({
      ...week,
      width: 900,
      labels: days,
      series: week.series.map((series) => ({ ...series, values: days.map((_, i) => i) })),
    })
    const labels = /<g class="chart-labels"[^>]*>(.*?)<\/g>/s.exec(svg)![1]
    const xs = [...labels.matchAll(/<text x="([\d.]+)"[^>]*>([^<]*)<\/text>/g)].map((m) => ({
      x: Number(m[1]),
      text: m[2],
    }))
    const last = xs[xs.length - 1]
    assert.equal(last.text, '11月27日')
    assert.isAtMost(last.x + textWidthOf(last.text) / 2, 900)
    assert.isAtLeast(xs[0].x - textWidthOf(xs[0].text) / 2, 0)
  })

  test("the legend leaves room for wide (Chinese) names: a swatch never sits under the next name's text", ({
    assert,
  }) => {
    assert.equal(textWidthOf('Paid'), 28)
    assert.equal(textWidthOf('已创建'), 36)
    assert.equal(textWidthOf('USDT 成交额'), 7 * 5 + 12 * 3)
    const svg = renderChart({
      ...week,
      series: [
        { name: '已创建', key: 'created', values: week.series[0].values },
        { name: '已支付', key: 'paid', values: week.series[1].values },
      ],
    })
    const legend = /<g class="chart-legend"[^>]*>(.*?)<\/g>/s.exec(svg)![1]
    const texts = [...legend.matchAll(/<text x="([\d.]+)"[^>]*>([^<]*)<\/text>/g)].map((m) => ({
      x: Number(m[1]),
      name: m[2],
    }))
    const swatches = [...legend.matchAll(/<rect[^>]* x="([\d.]+)"/g)].map((m) => Number(m[1]))
    // Right to left: 已支付, its swatch, 已创建, its swatch. 已创建 must end before 已支付's swatch.
    const created = texts.find((text) => text.name === '已创建')!
    assert.isAtMost(created.x + 3 * 12, swatches[0], "已创建 ends before 已支付's swatch")
  })

  test('an image named by its title and described by a summary of the data', ({ assert }) => {
    const svg = renderChart(week)
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" [^>]*role="img"/)
    assert.include(svg, 'aria-labelledby="orders-chart-title"')
    assert.include(svg, 'aria-describedby="orders-chart-desc"')
    assert.include(svg, '<title id="orders-chart-title">Orders per day</title>')
    assert.include(
      svg,
      '<desc id="orders-chart-desc">9 Jun to 15 Jun. Created: 26 in total, highest 12 on 12 Jun. Paid: 20 in total, highest 9 on 12 Jun.</desc>'
    )
    assert.isTrue(svg.endsWith('</svg>'))
  })

  test('one bar per value and series, each with its own tooltip; colours from classes, no inline style', ({
    assert,
  }) => {
    const svg = renderChart(week)
    assert.equal(count(svg, /<rect class="chart-bar"/g), 14)
    assert.include(svg, '<g class="chart-series series-1 chart-created">')
    assert.include(svg, '<g class="chart-series series-2 chart-paid">')
    assert.include(svg, '<title>12 Jun: Created 12</title>')
    assert.include(svg, '<title>12 Jun: Paid 9</title>')
    assert.notInclude(svg, 'style=')
    assert.notInclude(svg, '<script')
    assert.notMatch(svg, /fill="#|stroke="#/)
  })

  test('bar heights are proportional to the values on a round axis', ({ assert }) => {
    const svg = renderChart({ ...week, height: 228 })
    // Plot height 228 − 28 − 24 = 176; 12 at most → axis up to 12 (steps of 3).
    const heights = [...svg.matchAll(/<rect class="chart-bar" [^>]*height="([\d.]+)"/g)].map(
      (match) => Number(match[1])
    )
    assert.equal(heights[3], 176)
    assert.equal(heights[0], 44)
    assert.equal(heights[1], 0)
    assert.include(svg, '>12</text>')
    assert.include(svg, '>9</text>')
  })

  test('a line chart: one polyline and one point per value per series', ({ assert }) => {
    const svg = renderChart({ ...week, kind: 'line' })
    assert.equal(count(svg, /<polyline /g), 2)
    assert.equal(count(svg, /<circle class="chart-point"/g), 14)
    assert.include(svg, 'class="chart chart-line"')
  })

  test('text is escaped: a title or label cannot inject markup', ({ assert }) => {
    const svg = renderChart({
      ...week,
      title: 'Volume <script>alert(1)</script> & "more"',
      labels: week.labels.map((label, index) => (index === 0 ? '<b>x</b>' : label)),
    })
    assert.notInclude(svg, '<script>')
    assert.notInclude(svg, '<b>')
    assert.include(svg, 'Volume &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;more&quot;')
    assert.include(svg, '&lt;b&gt;x&lt;/b&gt;')
  })

  test('no data: an empty axis and a summary that says so', ({ assert }) => {
    const empty = {
      ...week,
      series: week.series.map((series) => ({ ...series, values: series.values.map(() => 0) })),
    }
    assert.equal(chartSummary(empty), '9 Jun to 15 Jun. Created: none. Paid: none.')
    const svg = renderChart(empty)
    assert.include(svg, '>4</text>')
    assert.notInclude(svg, 'NaN')
    assert.notInclude(svg, 'Infinity')
  })

  test('bad input is refused with a message: an id, a key, values not matching the labels', ({
    assert,
  }) => {
    assert.throws(() => renderChart({ ...week, id: '1 bad' }), /chart id "1 bad" is not a valid id/)
    assert.throws(
      () =>
        renderChart({
          ...week,
          series: [{ name: 'X', key: 'Bad Key', values: week.labels.map(() => 1) }],
        }),
      /series key "Bad Key"/
    )
    assert.throws(
      () => renderChart({ ...week, series: [{ name: 'X', key: 'x', values: [1] }] }),
      /series "X" has 1 values for 7 labels/
    )
    assert.throws(() => renderChart({ ...week, series: [] }), /at least one series/)
  })

  test('the data table: caption, a header per series, a row per label', ({ assert }) => {
    const table = chartTable(week)
    assert.match(table, /^<table class="chart-data"><caption>Orders per day<\/caption>/)
    assert.include(
      table,
      '<thead><tr><th scope="col">Day</th><th scope="col" class="num">Created</th><th scope="col" class="num">Paid</th></tr></thead>'
    )
    assert.include(
      table,
      '<tr><th scope="row">12 Jun</th><td class="num">12</td><td class="num">9</td></tr>'
    )
    assert.equal(count(table, /<tr><th scope="row">/g), 7)
  })

  test('a fitted axis: round bounds just around the data, not from 0; a sensible span when flat', ({
    assert,
  }) => {
    assert.deepEqual(fitAxis(7.18, 7.26), { low: 7.175, high: 7.275 })
    assert.deepEqual(fitAxis(7.1, 7.3), { low: 7.08, high: 7.32 })
    // All equal: ±1 % around the value, rounded out; around 0: up to 1 at least.
    assert.deepEqual(fitAxis(7.2, 7.2), { low: 7.12, high: 7.28 })
    assert.deepEqual(fitAxis(0, 0), { low: 0, high: 1 })
    // Never below 0 for data that is not.
    assert.deepEqual(fitAxis(0.5, 10), { low: 0, high: 12 })
    // Steps of 1000 from 97,000 would end short of the margin above 101,000: steps of 2000.
    assert.deepEqual(fitAxis(98_000, 101_000), { low: 96_000, high: 104_000 })
    assert.deepEqual(fitAxis(0.0000123, 0.0000125), { low: 0.00001224, high: 0.00001256 })
  })

  test('a line chart fits its axis to the data; a bar chart starts at 0; `axis` overrides', ({
    assert,
  }) => {
    const rates: ChartInput = {
      id: 'rate-chart',
      kind: 'line',
      title: 'Rate',
      labels: ['1 Jun', '2 Jun', '3 Jun'],
      series: [{ name: 'CNY per USDT', key: 'rate', values: [7.18, 7.26, 7.22] }],
      format: (value) => value.toLocaleString('en-US', { maximumFractionDigits: 6 }),
      height: 228,
    }
    const ticks = (svg: string) =>
      [...svg.matchAll(/<text x="38" y="[\d.]+" [^>]*>([^<]+)<\/text>/g)].map((match) => match[1])
    const line = renderChart(rates)
    assert.deepEqual(ticks(line), ['7.175', '7.2', '7.225', '7.25', '7.275'])
    // Plot from y 28 to 204 (176 high) for 7.175..7.275: 7.18 at 5 %, 7.26 at 85 %.
    const cys = [...line.matchAll(/<circle class="chart-point" cx="[\d.]+" cy="([\d.]+)"/g)].map(
      (match) => Number(match[1])
    )
    assert.deepEqual(cys, [195.2, 54.4, 124.8])
    assert.deepEqual(ticks(renderChart({ ...rates, axis: 'zero' })), ['0', '2', '4', '6', '8'])
    assert.deepEqual(ticks(renderChart({ ...rates, kind: 'bar' })), ['0', '2', '4', '6', '8'])
    assert.deepEqual(ticks(renderChart(week)), ['0', '3', '6', '9', '12'])
  })

  test('round axis tops', ({ assert }) => {
    assert.equal(niceMax(0), 4)
    assert.equal(niceMax(1), 4)
    assert.equal(niceMax(9), 12)
    assert.equal(niceMax(12), 12)
    assert.equal(niceMax(13), 16)
    assert.equal(niceMax(1234), 1600)
    assert.equal(niceMax(0.37, false), 0.4)
  })
})
