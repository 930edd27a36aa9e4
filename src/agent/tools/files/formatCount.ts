/** .what = a count with thousands separators (12,345), as the model reads numbers in results */
export const formatCount = (count: number): string => count.toLocaleString('en-US');
