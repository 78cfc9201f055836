/**
 * Clubs of the simulated world and who is in them, without materialising membership.
 *
 * Each club c owns a run of candidate slots [P(c), P(c+1)) in one line of slots; clubs are laid out
 * strongest first. Slots and players are matched by a monotone stride (whichever of the two is more
 * numerous is spread over the other), so a club's candidates are players of similar strength and
 * both directions are O(1) plus one binary search. Every player has two candidate slots: its home
 * slot j and an away slot j + SHIFT (a club of similar strength a little further down the list).
 *
 * At a time, a player's tenure says where it is: home, away or in no club; founders (first home
 * slot of a club) always stay home. A club's members are its home candidates that are home followed
 * by its away candidates that are away, the first 30 of them; the first is president. Players move
 * between the two clubs and leave and rejoin as tenures change, and `/clubs/{tag}`, `/members` and
 * every member's `club` field agree at every instant because they are all read from this one rule.
 */
import { clubDescriptions, clubWords, markupCodes } from './catalogue/index.ts';
import { DAY_MS, pickCountry, Salt } from './model.ts';
import { between, Stream, unit } from './rng.ts';

export const MAX_MEMBERS = 30;
const MAX_CANDIDATES = 36;

export class ClubLayout {
  private prefix: Float64Array | null = null;

  constructor(
    private readonly seed: number,
    readonly players: number,
    readonly clubs: number,
  ) {
    this.falloff = Math.max(0, (25 * clubs) / (0.85 * players) - 1);
  }

  /**
   * When players are scarce (few per club), club sizes fall off with club strength as (1 − c/C)^α,
   * α chosen so that about 85% of players have a club: top clubs stay full, the tail is small.
   */
  private readonly falloff: number;

  /** Candidate slots of club c: a target size (many full clubs, a tail of small ones) plus churn room. */
  private slotsOf(c: number): number {
    const u = unit(this.seed, Salt.ClubSize, c);
    const raw = u < 0.45 ? 30 : u < 0.75 ? between(15, 29, this.seed, Salt.ClubSize, c, 1) : between(1, 14, this.seed, Salt.ClubSize, c, 2);
    const scaled = raw * Math.pow(1 - (c + 0.5) / this.clubs, this.falloff);
    const target = Math.max(1, Math.min(30, Math.round(c < this.clubs * 0.05 ? Math.max(scaled, 24) : scaled)));
    return Math.min(MAX_CANDIDATES, Math.ceil(target / 0.85) + 1);
  }

  /** Lazily built prefix sums of slot counts (one float per club; built once, on first use). */
  private table(): Float64Array {
    if (!this.prefix) {
      const p = new Float64Array(this.clubs + 1);
      for (let c = 0; c < this.clubs; c++) p[c + 1] = p[c]! + this.slotsOf(c);
      this.prefix = p;
    }
    return this.prefix;
  }

  get totalSlots(): number {
    return this.table()[this.clubs]!;
  }

  /** Slot of player i, or -1 when the player is never in a club. */
  slotOfPlayer(i: number): number {
    const W = this.totalSlots;
    const N = this.players;
    if (W >= N) return Math.floor((i * W) / N);
    const j = Math.ceil((i * W) / N);
    return j < W && Math.floor((j * N) / W) === i ? j : -1;
  }

  /** Player in slot j, or -1 when the slot is empty. */
  playerOfSlot(j: number): number {
    const W = this.totalSlots;
    const N = this.players;
    if (W < N) return Math.floor((j * N) / W);
    const i = Math.ceil((j * N) / W);
    return i < N && Math.floor((i * W) / N) === j ? i : -1;
  }

  clubOfSlot(j: number): number {
    const p = this.table();
    let lo = 0;
    let hi = this.clubs - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (p[mid]! <= j) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** Slots between a player's home and away slot: roughly three clubs further down. */
  private get shift(): number {
    return Math.min(Math.max(1, this.totalSlots - 1), 3 * MAX_CANDIDATES);
  }

  /** Candidate player indices of club c at home slots, in slot order (-1 for empty slots). */
  candidates(c: number): number[] {
    const p = this.table();
    const out: number[] = [];
    for (let j = p[c]!; j < p[c + 1]!; j++) out.push(this.playerOfSlot(j));
    return out;
  }

  /** Players whose away slot lies in club c, in slot order (-1 for empty slots). */
  awayCandidates(c: number): number[] {
    const p = this.table();
    const W = this.totalSlots;
    const out: number[] = [];
    for (let j = p[c]!; j < p[c + 1]!; j++) out.push(this.playerOfSlot((((j - this.shift) % W) + W) % W));
    return out;
  }

  /** The strongest (lowest-index) player that can be in club c, or -1: bounds club trophies in rankings. */
  strongestCandidate(c: number): number {
    let best = -1;
    for (const i of [...this.candidates(c), ...this.awayCandidates(c)]) if (i >= 0 && (best < 0 || i < best)) best = i;
    return best;
  }

  /** The club whose home candidate player i is (whether or not currently a member), or -1. */
  clubOfPlayer(i: number): number {
    const j = this.slotOfPlayer(i);
    return j < 0 ? -1 : this.clubOfSlot(j);
  }

  private awayClubOfPlayer(i: number): number {
    const j = this.slotOfPlayer(i);
    return j < 0 ? -1 : this.clubOfSlot((j + this.shift) % this.totalSlots);
  }

  /** Where player i is at a time: 'home', 'away' or null (no club). Founders always stay home. */
  private placeOf(i: number, founder: boolean, atMs: number): 'home' | 'away' | null {
    if (founder) return 'home';
    const len = 30 + unit(this.seed, Salt.Tenure, i) * 210;
    const phase = unit(this.seed, Salt.Tenure, i, 1) * len;
    const seg = Math.floor((atMs / DAY_MS + phase) / len);
    const u = unit(this.seed, Salt.ClubOn, i, seg);
    return u < 0.72 ? 'home' : u < 0.86 ? 'away' : null;
  }

  /** Members of club c at a time, in seniority order (home before away, then slot order); the first is president. */
  members(c: number, atMs: number): number[] {
    const out: number[] = [];
    const home = this.candidates(c);
    for (let k = 0; k < home.length && out.length < MAX_MEMBERS; k++) {
      const i = home[k]!;
      if (i >= 0 && this.placeOf(i, k === 0, atMs) === 'home') out.push(i);
    }
    if (this.clubs > 1) {
      for (const i of this.awayCandidates(c)) {
        if (out.length >= MAX_MEMBERS) break;
        if (i >= 0 && !this.isFounder(i) && this.placeOf(i, false, atMs) === 'away' && this.awayClubOfPlayer(i) !== this.clubOfPlayer(i)) out.push(i);
      }
    }
    return out;
  }

  private isFounder(i: number): boolean {
    const j = this.slotOfPlayer(i);
    return j >= 0 && this.table()[this.clubOfSlot(j)] === j;
  }

  /** The club player i is in at a time, or -1. */
  memberClub(i: number, atMs: number): number {
    const home = this.clubOfPlayer(i);
    if (home < 0) return -1;
    const place = this.placeOf(i, this.isFounder(i), atMs);
    const c = place === 'home' ? home : place === 'away' ? this.awayClubOfPlayer(i) : -1;
    if (c < 0 || (place === 'away' && c === home)) return -1;
    return this.members(c, atMs).includes(i) ? c : -1;
  }

  /** Role of a member other than the president; reshuffled every three weeks. */
  role(i: number, atMs: number): string {
    const len = 21;
    const phase = unit(this.seed, Salt.ClubRole, i) * len;
    const epoch = Math.floor((atMs / DAY_MS + phase) / len);
    const u = unit(this.seed, Salt.ClubRole, i, epoch);
    return u < 0.1 ? 'vicePresident' : u < 0.35 ? 'senior' : 'member';
  }

  country(c: number): string {
    return pickCountry(unit(this.seed, Salt.ClubMeta, c, 1));
  }

  name(c: number): string {
    const s = new Stream(this.seed, Salt.ClubMeta, c, 2);
    const adj = s.pick(clubWords.adjectives);
    const noun = s.pick(clubWords.nouns);
    const u = s.next();
    if (u < 0.4) return `${adj} ${noun}`;
    if (u < 0.6) return s.pick(clubWords.native);
    if (u < 0.72) return `<c${s.pick(markupCodes)}>${adj.toUpperCase()}</c> ${noun}`;
    if (u < 0.82) return `${adj} ${noun}`.toUpperCase();
    if (u < 0.9) return `${noun} ${s.int(2, 9)}`;
    return `${s.pick(clubWords.native)} ${s.pick(['⭐', '🔥', '👑', '🐉', '💎', '🌙', ''])}`.trim();
  }

  meta(c: number, atMs: number) {
    const s = new Stream(this.seed, Salt.ClubMeta, c, 3);
    const descr = s.pick(clubDescriptions);
    const badgeId = 8000000 + s.int(0, 59);
    const family = s.chance(0.3);
    // Presidents reopen or close the club now and then (60-day periods).
    const period = Math.floor(atMs / (60 * DAY_MS));
    const u = unit(this.seed, Salt.ClubMeta, c, 4, period);
    const type = u < 0.45 ? 'open' : u < 0.9 ? 'inviteOnly' : 'closed';
    return { description: descr, badgeId, isFamilyFriendly: family, type };
  }
}
