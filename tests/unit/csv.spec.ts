import { test } from '@japa/runner'
import { csvCell, csvRow } from '#support/text/csv'

test.group('CSV cells', () => {
  test('plain text and numbers are written as they are', ({ assert }) => {
    assert.equal(csvCell('T00000001'), 'T00000001')
    assert.equal(csvCell('13.80'), '13.80')
    assert.equal(csvCell(2), '2')
    assert.equal(csvCell(null), '')
    assert.equal(csvCell(undefined), '')
    assert.equal(csvCell(''), '')
  })

  test('commas, quotes and line breaks are quoted, quotes doubled', ({ assert }) => {
    assert.equal(csvCell('a,b'), '"a,b"')
    assert.equal(csvCell('say "hi"'), '"say ""hi"""')
    assert.equal(csvCell('two\nlines'), '"two\nlines"')
    assert.equal(csvCell('cr\rhere'), '"cr\rhere"')
  })

  test('a cell a spreadsheet would read as a formula gets a leading quote', ({ assert }) => {
    assert.equal(
      csvCell('=HYPERLINK("http://evil.test","x")'),
      `"'=HYPERLINK(""http://evil.test"",""x"")"`
    )
    assert.equal(csvCell('+1+1'), "'+1+1")
    assert.equal(csvCell('-2+3'), "'-2+3")
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)")
    assert.equal(csvCell('\t=1'), "'\t=1")
    assert.equal(csvCell('\r=1'), `"'\r=1"`)
    // Only at the start: inside a cell these are plain characters.
    assert.equal(csvCell('a=b'), 'a=b')
    assert.equal(csvCell('ORD-7'), 'ORD-7')
  })

  test('a JS number keeps its minus sign', ({ assert }) => {
    assert.equal(csvCell(-5), '-5')
  })

  test('a row joins its cells with commas and ends with CRLF', ({ assert }) => {
    assert.equal(csvRow(['a', 'b,c', 3, null]), 'a,"b,c",3,\r\n')
  })
})
