import { test } from '@japa/runner'
import { chartTable, renderChart, type ChartInput } from '#services/admin/svg_chart'
import { DESKTOP, closeBrowser, newPage, seriousAxeViolations } from '#tests/helpers/browser'

const chart: ChartInput = {
  id: 'orders-chart',
  kind: 'bar',
  title: 'Orders per day',
  labels: Array.from({ length: 14 }, (_, index) => `${index + 2} Jun`),
  series: [
    { name: 'Created', key: 'created', values: [3, 0, 5, 12, 4, 0, 2, 7, 1, 0, 0, 9, 3, 2] },
    { name: 'Paid', key: 'paid', values: [2, 0, 4, 9, 4, 0, 1, 6, 1, 0, 0, 8, 3, 1] },
  ],
}

test.group('SVG chart in Chromium', (group) => {
  group.teardown(() => closeBrowser())

  test('well-formed SVG (the browser parses it as image/svg+xml without error)', async ({
    assert,
  }) => {
    const { context, page } = await newPage(DESKTOP)
    try {
      for (const kind of ['bar', 'line'] as const) {
        const source = renderChart({ ...chart, kind, title: 'Tom & Jerry <orders>' })
        const parsed = await page.evaluate((text) => {
          // Runs in the page (the tests' tsconfig has no DOM types).
          const document = new (globalThis as any).DOMParser().parseFromString(
            text,
            'image/svg+xml'
          )
          const error = document.getElementsByTagName('parsererror')[0]
          return {
            error: error ? error.textContent : null,
            root: document.documentElement.localName,
            namespace: document.documentElement.namespaceURI,
            title: document.querySelector('title')?.textContent,
          }
        }, source)
        assert.deepEqual(parsed, {
          error: null,
          root: 'svg',
          namespace: 'http://www.w3.org/2000/svg',
          title: 'Tom & Jerry <orders>',
        })
      }
    } finally {
      await context.close()
    }
  })

  test('in a page: an image with its accessible name and description; the data table; no serious axe violation', async ({
    assert,
  }) => {
    const { context, page } = await newPage(DESKTOP)
    try {
      await page.setContent(
        `<!doctype html><html lang="en"><head><title>Chart</title></head><body><main><h1>Dashboard</h1>` +
          `<figure>${renderChart(chart)}<details><summary>Show data</summary>${chartTable(chart)}</details></figure>` +
          `</main></body></html>`
      )
      const image = page.getByRole('img', { name: 'Orders per day', exact: true })
      assert.equal(await image.count(), 1)

      const cdp = await context.newCDPSession(page)
      const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
        nodes: {
          role?: { value: string }
          name?: { value: string }
          description?: { value: string }
        }[]
      }
      const node = nodes.find(
        (candidate) =>
          candidate.name?.value === 'Orders per day' && candidate.role?.value === 'image'
      )
      assert.exists(node, 'the chart is in the accessibility tree as a named image')
      assert.equal(
        node!.description?.value,
        '2 Jun to 15 Jun. Created: 48 in total, highest 12 on 5 Jun. Paid: 39 in total, highest 9 on 5 Jun.'
      )

      await page.getByText('Show data').click()
      const table = page.getByRole('table', { name: 'Orders per day' })
      assert.equal(await table.getByRole('row').count(), 15)
      assert.deepEqual(await seriousAxeViolations(page), [])
    } finally {
      await context.close()
    }
  })
})
