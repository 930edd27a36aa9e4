/** .what = one captured stream: its kept head and tail, and how many bytes were dropped between them */
export interface BashStreamText {
  head: string;
  tail: string;
  droppedBytes: number;
  totalBytes: number;
}
