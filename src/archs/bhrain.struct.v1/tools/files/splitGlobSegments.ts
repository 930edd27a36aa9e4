/**
 * .what = the segments of one brace-free glob: '**' stays a marker; empty, './' and repeated '**' segments drop
 * .why = one normalization for the whole-path regex and for directory pruning, so both agree
 */
export const splitGlobSegments = (pattern: string): string[] => {
  const segments: string[] = [];
  for (const segment of pattern.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '**' && segments[segments.length - 1] === '**') continue;
    segments.push(segment);
  }
  return segments;
};
