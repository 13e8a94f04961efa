/**
 * The block list: clients refused with 403 (spec, Limits: "clients that are blocked for abuse receive
 * 403"). A JSON file `{"format": 1, "userAgents": [regex, ...], "addresses": [address or CIDR, ...]}`
 * (templates/blocklist.json), read at start and read again whenever its size, time or inode changes
 * (checked every few seconds), so an operator blocks a client without a restart. A missing file is an
 * empty list (until it appears); a broken file stops the start, and while running keeps the last good
 * list, logged once per broken version.
 */
import { stat } from "node:fs/promises";
import { z } from "zod";
import { readConfigJson } from "../../auth/configFile.ts";
import { UserError } from "../../errors.ts";
import { AddressList } from "./addressList.ts";
import { AddressEntry, AgentPattern, anyOf, matchedAgent } from "./listSchemas.ts";

export const BlockListFile = z.strictObject({
  format: z.literal(1),
  userAgents: z.array(AgentPattern).max(10_000).default([]),
  addresses: z.array(AddressEntry).max(100_000).default([]),
});

interface Compiled {
  agents: RegExp | undefined;
  addresses: AddressList;
  entries: number;
}

const EMPTY: Compiled = { agents: undefined, addresses: new AddressList([]), entries: 0 };

export interface BlockList {
  /** Whether this client is blocked. `userAgent` may be undefined. */
  blocks(address: string, userAgent: string | undefined): boolean;
  /** How many entries are in force. */
  readonly entries: number;
  /** Reads the file again now if it changed (the timer does this on its own). */
  refresh(): Promise<void>;
  close(): void;
}

async function read(file: string): Promise<Compiled> {
  const json = await readConfigJson(file, {
    what: "block list",
    maxBytes: 16 * 1024 * 1024,
    sizeFix: "check that this is the block list (templates/blocklist.json shows one)",
    readFix: "check the path and that the service's account may read it",
    syntaxFix: "fix the JSON syntax (templates/blocklist.json is a valid example)",
  });
  if (json === undefined) return EMPTY;
  const parsed = BlockListFile.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(`${issue.path.map(String).join(".") || "(top level)"}: ${issue.message}`, {
      where: file,
      fix: `the block list is {"format": 1, "userAgents": ["regular expression", ...], "addresses": ["192.0.2.7", "198.51.100.0/24", ...]}`,
    });
  }
  const { userAgents, addresses } = parsed.data;
  return {
    agents: anyOf(userAgents),
    addresses: new AddressList(addresses),
    entries: userAgents.length + addresses.length,
  };
}

const versionOf = (file: string) =>
  stat(file).then(
    (s) => `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`,
    () => "missing",
  );

export async function openBlockList(options: { file: string; reloadSeconds: number; log: (line: string) => void }): Promise<BlockList> {
  const { file, log } = options;
  let version = await versionOf(file);
  let current = await read(file);
  let brokenVersion: string | undefined;
  let closed = false;

  async function refresh(): Promise<void> {
    const seen = await versionOf(file);
    if (seen === version || seen === brokenVersion) return;
    try {
      current = await read(file);
      version = seen;
      brokenVersion = undefined;
      log(`block list ${file}: ${current.entries} entr${current.entries === 1 ? "y" : "ies"} in force`);
    } catch (error) {
      brokenVersion = seen;
      log(`block list ${file} was not reloaded, the previous list stays in force: ${(error as Error).message}`);
    }
  }
  // Re-stat rather than fs.watch: it also sees a file replaced by rename, or on a network file system.
  const timer = setInterval(() => {
    if (!closed) void refresh();
  }, options.reloadSeconds * 1000);
  timer.unref();

  return {
    blocks(address, userAgent) {
      if (current.entries === 0) return false;
      if (current.addresses.has(address)) return true;
      return userAgent !== undefined && current.agents !== undefined && current.agents.test(matchedAgent(userAgent));
    },
    get entries() {
      return current.entries;
    },
    refresh,
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
