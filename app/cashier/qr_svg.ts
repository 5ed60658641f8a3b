import QRCode from 'qrcode'

/**
 * A QR code as inline SVG, rendered on the server by the `qrcode` package:
 * no script and no request needed to show it. Always dark on light (what
 * wallet scanners expect), whatever the page's colour scheme.
 */
export async function qrSvg(text: string, label: string): Promise<string> {
  const svg = await QRCode.toString(text, {
    type: 'svg',
    errorCorrectionLevel: 'M',
    margin: 2,
    color: { dark: '#000000', light: '#ffffff' },
  })
  return svg.replace(
    '<svg ',
    `<svg role="img" aria-label="${escapeAttribute(label)}" focusable="false" `
  )
}

function escapeAttribute(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
}
