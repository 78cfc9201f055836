/** HTTP entity tags, shared by the API's caching headers and the picture service's conditional reads. */

/** RFC 9110 If-None-Match with weak comparison. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === bare);
}
