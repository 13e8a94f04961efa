/** A one-line progress bar on a terminal (stderr), for builds of many runs; silent elsewhere. */
export function progressBar(stream: NodeJS.WriteStream = process.stderr, minimum = 20): (done: number, total: number, label: string) => void {
  if (!stream.isTTY) return () => {};
  return (done, total, label) => {
    if (total < minimum) return;
    const width = 30;
    const filled = Math.round((done / total) * width);
    const text = `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} ${label}`;
    stream.write(`\r${text.slice(0, (stream.columns ?? 80) - 1).padEnd((stream.columns ?? 80) - 1)}`);
    if (done === total) stream.write("\n");
  };
}
