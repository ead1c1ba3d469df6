// Headers that keep a browser from misreading or embedding what we serve: every
// asset is nosniff and unframeable; the demo page gets a Content-Security-Policy
// that allows its own inline script and style (by hash), the SDK and the
// kernel from this origin, WebAssembly compilation and nothing else.
import { createHash } from 'node:crypto';

/** On every asset (the SDK, the kernel, the OpenAPI document, the demo page). */
export const ASSET_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
};

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The hash sources of each inline `<tag>...</tag>` block of `html` (tags without attributes other than type). */
function inlineHashes(html: string, tag: 'script' | 'style'): string[] {
  const blocks = html.matchAll(new RegExp(`<${tag}(?:\\s+type="[^"]*")?>([\\s\\S]*?)</${tag}>`, 'g'));
  return [...blocks].map((m) => sha256(m[1]));
}

/** The headers of an HTML page whose only script and style are inline in it. */
export function pageHeaders(html: string): Record<string, string> {
  const policy = [
    "default-src 'none'",
    `script-src 'self' 'wasm-unsafe-eval' ${inlineHashes(html, 'script').join(' ')}`,
    `style-src ${inlineHashes(html, 'style').join(' ')}`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { ...ASSET_HEADERS, 'Content-Security-Policy': policy };
}
