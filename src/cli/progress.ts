/** How often the bar is drawn at most: a cold build takes 1,000 unchanged runs in a few ms, and a terminal write per run cost more than they did. */
const FRAME_MS = 100;

/**
 * A one-line progress bar on a terminal (stderr), for builds of many runs; silent elsewhere. Drawn at the
 * first run, then at most every FRAME_MS (`now`: the clock, for tests), and at the last.
 */
export function progressBar(stream: NodeJS.WriteStream = process.stderr, minimum = 20, now: () => number = () => performance.now()): (done: number, total: number, label: string) => void {
  if (!stream.isTTY) return () => {};
  let drawnAt = Number.NEGATIVE_INFINITY;
  return (done, total, label) => {
    if (total < minimum) return;
    const at = now();
    if (done !== total && at - drawnAt < FRAME_MS) return;
    drawnAt = at;
    const width = 30;
    const filled = Math.round((done / total) * width);
    const text = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} ${label}`;
    stream.write(`\r${text.slice(0, (stream.columns ?? 80) - 1).padEnd((stream.columns ?? 80) - 1)}`);
    if (done === total) stream.write("\n");
  };
}
