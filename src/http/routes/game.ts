/** GET /game (the list of CSV game-data files) and GET /game/{file} (one file, text/csv). */
import { z } from 'zod';
import { GameData, GAME_FILES, type GameFiles } from '../gamedata.ts';
import { cached, defineRoute, HttpError, routeGroup, type HttpRuntime } from '../route.ts';
import { GameFileList } from '../schemas.ts';
import type { Core } from '../../core/index.ts';

const instances = new WeakMap<Core, GameData>();
function gameData(rt: HttpRuntime): GameData {
  let g = instances.get(rt.core);
  if (!g) {
    g = new GameData(rt.core.stats, rt.core.stores.namespace('gamedata'), rt.now);
    instances.set(rt.core, g);
  }
  return g;
}

export const fileList = (g: GameFiles) => ({
  items: g.files.map((f) => ({
    name: f.name,
    url: `/game/${f.name}`,
    rows: f.rows,
    updatedAt: new Date(g.updatedAt).toISOString(),
    description: f.description,
  })),
});

export default routeGroup('game', [
  defineRoute({
    method: 'GET',
    url: '/game',
    operationId: 'listGameFiles',
    summary: 'Game data files',
    description: 'The CSV files built from the official catalogue, rebuilt whenever the catalogue changes.',
    tags: ['Game data'],
    apiKey: false,
    cacheable: true,
    response: GameFileList,
    handler: async ({ runtime }) => cached(await gameData(runtime).files(), fileList),
  }),
  defineRoute({
    method: 'GET',
    url: '/game/:file',
    operationId: 'getGameFile',
    summary: 'One game data file',
    tags: ['Game data'],
    apiKey: false,
    params: {
      file: z.string().meta({ description: `File name: ${GAME_FILES.map((f) => f.name).join(', ')}`, examples: ['brawlers.csv'] }),
    },
    cacheable: true,
    response: { schema: z.string(), contentType: 'text/csv', description: 'The file (RFC 4180, header row first)' },
    notFound: 'Game file not found',
    handler: async ({ runtime, params }) => {
      const files = await gameData(runtime).files();
      const file = files.data.files.find((f) => f.name === params.file);
      if (!file) {
        throw new HttpError(404, `Game file not found. Available: ${files.data.files.map((f) => f.name).join(', ')}`);
      }
      return cached(files, () => file.csv, 'text/csv; charset=utf-8');
    },
  }),
]);
