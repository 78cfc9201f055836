/**
 * The history and image services as the bot uses them. History is an optional part of the core
 * (CONTRACTS.md): the views built on it say plainly when it is missing.
 */
import type { HistoryService } from '../core/history.ts';
import type { ImageService } from '../core/images.ts';

export type HistoryReads = Pick<
  HistoryService,
  'pin' | 'unpin' | 'playerLog' | 'playerPush' | 'clubLog' | 'bestBuild' | 'events' | 'maps' | 'map'
>;

export type ImageMaker = Pick<ImageService, 'playerImage' | 'clubImage' | 'playerChart' | 'clubChart'>;
