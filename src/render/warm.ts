/**
 * First use of a font family costs Skia tens of milliseconds (loading and indexing its files); a
 * worker pays that once at start instead of inside a user's request.
 */
import { createCanvas } from '@napi-rs/canvas';
import { ensureFonts, font } from './fonts.ts';

const SAMPLES = ['Starr 0123456789', 'Привет Ελλάδα', 'مرحبا', 'שלום', 'สวัสดี', '꧁꧂', '你好かな', '안녕', '⭐🦉', '✿♛★', '𝓡'];

export function warmUp(): void {
  ensureFonts();
  const ctx = createCanvas(64, 64).getContext('2d');
  for (const size of [16, 20, 24]) {
    for (const s of SAMPLES) {
      ctx.font = font(size, {}, s);
      ctx.fillText(s, 0, 40);
    }
  }
}
