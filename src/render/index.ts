/**
 * The renderers behind one entry point: a RenderJob (kind, option, quality, input) → canvas or PNG.
 * Runs wherever it is called; the ImageService calls it inside the worker pool (pool.ts).
 */
import type { Canvas } from '@napi-rs/canvas';
import { CLUB_CHART_OPTIONS, CLUB_IMAGE_OPTIONS, PLAYER_CHART_OPTIONS, PLAYER_IMAGE_OPTIONS, type ChartOption } from './catalogue.ts';
import { loadArt } from './art.ts';
import { renderChart } from './chart.ts';
import { renderClubActivity } from './club-activity.ts';
import { renderClubClassic, renderClubPortrait } from './club-card.ts';
import { releasePixels, type Quality } from './draw.ts';
import { DEFINITIONS } from './measures.ts';
import {
  renderBrawlerDetails,
  renderCurrentWinRates,
  renderHighestTrophies,
  renderHighestWinRates,
  renderMastery,
  renderOldRanks,
  renderRanks,
  renderTrophies,
} from './player-brawlers.ts';
import { renderPlayerClassic } from './player-card.ts';
import { renderSeasonProgress } from './player-season.ts';
import { encodePng, type PngStyle } from './png.ts';
import type { ClubImageInput, PlayerImageInput, RenderJob } from './types.ts';
import { startPicture, wordsFor, type Words } from './words.ts';
import { languageOf } from '../i18n/index.ts';

export type { RenderJob } from './types.ts';

const PLAYER_IMAGES: Record<keyof typeof PLAYER_IMAGE_OPTIONS, (i: PlayerImageInput, q: Quality, w: Words) => Canvas> = {
  1: renderPlayerClassic,
  3: renderBrawlerDetails,
  4: renderRanks,
  41: renderOldRanks,
  6: renderMastery,
  8: renderTrophies,
  9: renderHighestTrophies,
  10: renderSeasonProgress,
  13: renderHighestWinRates,
  14: renderCurrentWinRates,
};

const CLUB_IMAGES: Record<keyof typeof CLUB_IMAGE_OPTIONS, (i: ClubImageInput, q: Quality, w: Words) => Canvas> = {
  2: renderClubClassic,
  200: renderClubPortrait,
  3: renderClubActivity,
};

/** The definition printed under a chart whose measure is derived (the same words as its image). */
function chartNote(opt: ChartOption<string>, words: Words): string | undefined {
  switch (opt.metric) {
    case 'masteryWins':
      return words.t('pic.note.mastery');
    case 'fame':
      return words.t('pic.note.fame');
    case 'battlesPerDay':
    case 'battlesPerMonth':
      return words.t('pic.note.activity');
    case 'memberWins':
      return words.t('pic.note.memberWins');
    default:
      return undefined;
  }
}

/** A chart's title: the bot's name for it (chart.player.N / chart.club.N) in the reader's language. */
function chartText(kind: 'player' | 'club', option: number, opt: ChartOption<string>, words: Words): { title: string; note?: string } {
  const note = chartNote(opt, words);
  return { title: words.t(`chart.${kind}.${option}`), ...(note ? { note } : {}) };
}

export class UnknownOptionError extends Error {
  constructor(kind: string, option: number) {
    super(`${kind} has no option ${option}`);
    this.name = 'UnknownOptionError';
  }
}

function pick<T>(table: Record<number, T>, kind: string, option: number): T {
  const v = table[option];
  if (v === undefined) throw new UnknownOptionError(kind, option);
  return v;
}

export function renderCanvas(job: RenderJob): Canvas {
  startPicture();
  const words = wordsFor(languageOf(job.lang));
  switch (job.kind) {
    case 'playerImage':
      return pick<(i: PlayerImageInput, q: Quality, w: Words) => Canvas>(PLAYER_IMAGES, job.kind, job.option)(job.input, job.quality, words);
    case 'clubImage':
      return pick<(i: ClubImageInput, q: Quality, w: Words) => Canvas>(CLUB_IMAGES, job.kind, job.option)(job.input, job.quality, words);
    case 'playerChart': {
      const opt = pick<ChartOption<string>>(PLAYER_CHART_OPTIONS, job.kind, job.option);
      return renderChart(opt, job.input, job.quality, chartText('player', job.option, opt, words), words);
    }
    case 'clubChart': {
      const opt = pick<ChartOption<string>>(CLUB_CHART_OPTIONS, job.kind, job.option);
      return renderChart(opt, job.input, job.quality, chartText('club', job.option, opt, words), words);
    }
  }
}

/** Charts are flat enough for a palette; everything else keeps every colour (see png.ts). */
export function pngStyle(job: RenderJob): PngStyle {
  return job.kind === 'playerChart' || job.kind === 'clubChart' ? 'palette' : 'truecolour';
}

/** The job's art decoded, ready for renderCanvas (which draws only art loaded this way). */
export async function prepareJob(job: RenderJob): Promise<void> {
  if (job.kind === 'playerImage' || job.kind === 'clubImage') await loadArt(job.input.art);
}

/** Renders and encodes in the calling thread. */
export async function renderPng(job: RenderJob): Promise<Buffer> {
  await prepareJob(job);
  const canvas = renderCanvas(job);
  const { width, height } = canvas;
  const rgba = canvas.data();
  releasePixels(canvas);
  return encodePng(rgba, width, height, pngStyle(job));
}
