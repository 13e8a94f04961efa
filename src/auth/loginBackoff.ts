/**
 * Per-account backoff on failed logins (security.md, Passwords): after a few failures, an account must
 * wait a doubling delay before its password is checked again. Keyed by the username as sent, known or
 * not, so the answers say nothing about which accounts exist. The delay is capped and forgotten after a
 * quiet period, so an attacker can slow a real user down but never lock them out for good. Pure: the
 * clock is passed in. Memory is bounded: the oldest entries go first.
 */

export interface BackoffSettings {
  /** Failures allowed before any delay. */
  freeFailures: number;
  /** Delay after the first failure beyond the free ones; doubles with each further one. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** An account without a failure for this long starts afresh. */
  forgetAfterMs: number;
  /** Accounts remembered at most (a flood of made-up usernames must not exhaust memory). */
  maxAccounts: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = {
  freeFailures: 3,
  firstDelayMs: 1_000,
  maxDelayMs: 5 * 60_000,
  forgetAfterMs: 15 * 60_000,
  maxAccounts: 10_000,
};

interface Account {
  failures: number;
  lastFailureMs: number;
  /** No password check before this time. */
  blockedUntilMs: number;
}

export class LoginBackoff {
  readonly #accounts = new Map<string, Account>();
  readonly #settings: BackoffSettings;

  constructor(settings: BackoffSettings = DEFAULT_BACKOFF) {
    for (const [name, value] of Object.entries(settings)) {
      if (!Number.isFinite(value) || value < 0) throw new Error(`Internal error: LoginBackoff setting ${name} must be a non-negative number, got ${value}`);
    }
    if (settings.maxAccounts < 1) throw new Error("Internal error: LoginBackoff maxAccounts must be at least 1");
    this.#settings = settings;
  }

  /** Milliseconds the account must still wait before its password is checked; 0 when it may try now. */
  waitMs(username: string, nowMs: number): number {
    const account = this.#current(username, nowMs);
    return account ? Math.max(0, account.blockedUntilMs - nowMs) : 0;
  }

  failed(username: string, nowMs: number): void {
    const { freeFailures, firstDelayMs, maxDelayMs, maxAccounts } = this.#settings;
    const account = this.#current(username, nowMs) ?? { failures: 0, lastFailureMs: nowMs, blockedUntilMs: 0 };
    account.failures++;
    account.lastFailureMs = nowMs;
    const beyond = account.failures - freeFailures;
    account.blockedUntilMs = beyond > 0 ? nowMs + Math.min(maxDelayMs, firstDelayMs * 2 ** Math.min(beyond - 1, 30)) : 0;
    this.#accounts.delete(username); // re-inserted last: the map stays ordered by last failure
    this.#accounts.set(username, account);
    for (const oldest of this.#accounts.keys()) {
      if (this.#accounts.size <= maxAccounts) break;
      this.#accounts.delete(oldest);
    }
  }

  succeeded(username: string): void {
    this.#accounts.delete(username);
  }

  get size(): number {
    return this.#accounts.size;
  }

  #current(username: string, nowMs: number): Account | undefined {
    const account = this.#accounts.get(username);
    if (account && nowMs - account.lastFailureMs >= this.#settings.forgetAfterMs) {
      this.#accounts.delete(username);
      return undefined;
    }
    return account;
  }
}
