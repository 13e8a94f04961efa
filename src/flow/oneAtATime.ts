/**
 * A queue of one: each task given to the returned function starts once every task given before it has
 * settled, whether it succeeded or failed. For writes that must not interleave and work that must not pile up.
 */
export function oneAtATime(): <T>(task: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return (task) => {
    const turn = last.then(task);
    last = turn.catch(() => undefined);
    return turn;
  };
}
