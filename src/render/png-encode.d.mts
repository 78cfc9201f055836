/** Encodes opaque RGBA pixels as an 8-bit RGB PNG (see png-encode.mjs). */
export function encodePng(rgba: Uint8Array, width: number, height: number, opts?: { level?: number }): Buffer;
