/**
 * Channel permissions as Discord computes them (base from @everyone and the member's roles,
 * administrator and owner short-circuits, then channel overwrites: @everyone, roles, member).
 * Used where no gateway cache exists (the HTTP interactions transport) and by the fake Discord.
 */
import { PermissionFlagsBits } from 'discord-api-types/v10';

export interface RoleLike {
  id: string;
  permissions: string;
}

export interface OverwriteLike {
  id: string;
  /** 0 role, 1 member */
  type: number;
  allow: string;
  deny: string;
}

export interface PermissionInputs {
  guildId: string;
  ownerId: string;
  roles: RoleLike[];
  member: { userId: string; roles: string[] };
  overwrites: OverwriteLike[];
}

const ALL = (1n << 53n) - 1n;

export function channelPermissions(p: PermissionInputs): bigint {
  if (p.member.userId === p.ownerId) return ALL;
  const byId = new Map(p.roles.map((r) => [r.id, BigInt(r.permissions)]));
  // The @everyone role has the guild's id.
  let perms = byId.get(p.guildId) ?? 0n;
  for (const r of p.member.roles) perms |= byId.get(r) ?? 0n;
  if ((perms & PermissionFlagsBits.Administrator) !== 0n) return ALL;

  const apply = (o: OverwriteLike | undefined) => {
    if (!o) return;
    perms &= ~BigInt(o.deny);
    perms |= BigInt(o.allow);
  };
  apply(p.overwrites.find((o) => o.type === 0 && o.id === p.guildId));
  let allow = 0n;
  let deny = 0n;
  for (const o of p.overwrites) {
    if (o.type === 0 && o.id !== p.guildId && p.member.roles.includes(o.id)) {
      allow |= BigInt(o.allow);
      deny |= BigInt(o.deny);
    }
  }
  perms = (perms & ~deny) | allow;
  apply(p.overwrites.find((o) => o.type === 1 && o.id === p.member.userId));
  // Without View Channel nothing else in the channel applies.
  if ((perms & PermissionFlagsBits.ViewChannel) === 0n) return 0n;
  return perms;
}

/**
 * What a channel leaderboard needs from the bot, with the names Discord's settings show. Boards
 * are embeds only (no attachments), so Attach Files is not among them.
 */
export const BOARD_PERMISSIONS: [bigint, string][] = [
  [PermissionFlagsBits.ViewChannel, 'View Channel'],
  [PermissionFlagsBits.SendMessages, 'Send Messages'],
  [PermissionFlagsBits.EmbedLinks, 'Embed Links'],
];

/** Names of the leaderboard permissions missing from `perms`. */
export function missingBoardPermissions(perms: bigint): string[] {
  return BOARD_PERMISSIONS.filter(([bit]) => (perms & bit) === 0n).map(([, name]) => name);
}
