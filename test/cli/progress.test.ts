import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { progressBar } from "../../src/cli/progress.ts";

/** A real stream that says it is a terminal of 60 columns, collecting what is written. */
function terminal(isTTY: boolean): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
  Object.assign(stream, { isTTY, columns: 60 });
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => chunks.join("") };
}

describe("progressBar", () => {
  it("draws one rewritten line on a terminal for long builds, and ends it", async () => {
    const { stream, text } = terminal(true);
    let clock = 0;
    const update = progressBar(stream, 20, () => (clock += 100)); // a run every 100 ms: every one drawn
    for (let done = 1; done <= 40; done++) update(done, 40, `run-${done}`);
    await new Promise((resolve) => setImmediate(resolve));
    const frames = text().split("\r").filter(Boolean);
    expect(frames).toHaveLength(40);
    expect(frames[19]).toMatch(/^\[#{15}-{15}\] 20\/40 run-20 *$/);
    expect(frames[0]!.length).toBe(59);
    expect(frames[39]).toMatch(/^\[#{30}\] 40\/40 run-40 *\n$/);
  });

  it("draws the first and the last of runs that come faster than its frames, and one frame every 100 ms between", async () => {
    const { stream, text } = terminal(true);
    let clock = 0;
    const update = progressBar(stream, 20, () => clock);
    for (let done = 1; done <= 1000; done++) {
      clock = done; // a run a millisecond
      update(done, 1000, `run-${done}`);
    }
    await new Promise((resolve) => setImmediate(resolve));
    const frames = text().split("\r").filter(Boolean);
    expect(frames.map((frame) => frame.match(/\] (\d+)\//)?.[1])).toEqual(["1", "101", "201", "301", "401", "501", "601", "701", "801", "901", "1000"]);
    expect(frames.at(-1)).toMatch(/^\[#{30}\] 1000\/1000 run-1000 *\n$/);
  });

  it("stays silent when not on a terminal, and for short builds", async () => {
    const pipe = terminal(false);
    progressBar(pipe.stream, 20)(1, 40, "x");
    const tty = terminal(true);
    progressBar(tty.stream, 20)(1, 5, "x");
    await new Promise((resolve) => setImmediate(resolve));
    expect(pipe.text()).toBe("");
    expect(tty.text()).toBe("");
  });
});
