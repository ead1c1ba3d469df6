// Metadata as JSON text (exactly JSON.stringify's) with its UTF-8 length,
// made once per object: the request schema measures each metadata object
// against MAX_METADATA_BYTES, and the index writes the same text into its
// arena. Remembered per object until the object is collected (the request's
// end); a value passed on is never mutated, so the text stays true.

export interface JsonText {
  readonly text: string;
  /** UTF-8 bytes of the text. */
  readonly bytes: number;
}

const memo = new WeakMap<object, JsonText>();
const NON_ASCII = /[\u0080-\uffff]/;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c < 0xe000;

/** UTF-8 bytes of a string as TextEncoder writes it (a lone surrogate becomes U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  if (!NON_ASCII.test(text)) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4; // a surrogate pair: one code point past U+FFFF
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** `value` as JSON text and its UTF-8 length. */
export function jsonText(value: object): JsonText {
  let json = memo.get(value);
  if (json === undefined) {
    const text = JSON.stringify(value);
    json = { text, bytes: utf8Length(text) };
    memo.set(value, json);
  }
  return json;
}

export function jsonByteLength(value: unknown): number {
  if (typeof value === 'object' && value !== null) return jsonText(value).bytes;
  return utf8Length(JSON.stringify(value) ?? '');
}

const SURROGATE = /[\ud800-\udfff]/;

/** Whether `text` holds a surrogate that is not half of a pair (UTF-8 cannot hold it; JSON escapes it). */
export function hasLoneSurrogate(text: string): boolean {
  if (!SURROGATE.test(text)) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c < 0xdc00 && isLowSurrogate(text.charCodeAt(i + 1))) i++;
    else if (c >= 0xd800 && c < 0xe000) return true;
  }
  return false;
}

/**
 * Write `text` as UTF-8 into `target` from `at`; the end. A plain loop: for
 * the short and mostly ASCII strings of metadata it beats TextEncoder's
 * encodeInto, whose call costs more than the copy. A lone surrogate takes
 * three bytes (as WTF-8 writes it), so distinct strings stay distinct.
 */
export function writeUtf8(text: string, target: Uint8Array, at: number): number {
  let j = at;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c < 0x80) {
      target[j++] = c;
    } else if (c < 0x800) {
      target[j++] = 0xc0 | (c >> 6);
      target[j++] = 0x80 | (c & 0x3f);
    } else if (c >= 0xd800 && c < 0xdc00 && isLowSurrogate(text.charCodeAt(i + 1))) {
      c = 0x10000 + ((c - 0xd800) << 10) + (text.charCodeAt(++i) - 0xdc00);
      target[j++] = 0xf0 | (c >> 18);
      target[j++] = 0x80 | ((c >> 12) & 0x3f);
      target[j++] = 0x80 | ((c >> 6) & 0x3f);
      target[j++] = 0x80 | (c & 0x3f);
    } else {
      target[j++] = 0xe0 | (c >> 12);
      target[j++] = 0x80 | ((c >> 6) & 0x3f);
      target[j++] = 0x80 | (c & 0x3f);
    }
  }
  return j;
}
