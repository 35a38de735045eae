/**
 * `misbehave-ts`: a TypeScript strategy that misbehaves on purpose, for the
 * abuse tests (tests/it/ts_strategies.rs). The request's `top_n` picks what
 * it does at its first rebalance (the numbers of the Rust fixture,
 * components/misbehave-strategy; the server's self-test uses 2):
 *
 * - 8: a memory bomb: holds 16 MiB more and more, written, until something
 *   stops it (the instance's memory cap, or its fuel);
 * - 7: an endless loop (its fuel, or the deadline, must stop it);
 * - anything else: holds nothing (all cash).
 */
import { type Asset, type Context, type RunParams, type Strategy, type Target, exportStrategy } from "forecast-strategy";

class Misbehave implements Strategy {
  static readonly NAME = "misbehave-ts";
  static readonly VERSION = "0.0.1";
  static readonly DESCRIPTION = "Misbehaves on purpose (abuse tests): top_n 8 memory bomb, 7 endless loop.";

  constructor(private readonly mode: number) {}

  static start(_universe: Asset[], params: RunParams): Misbehave {
    return new Misbehave(params.topN);
  }

  rebalance(_ctx: Context): Target[] {
    if (this.mode === 8) {
      const held: Uint8Array[] = [];
      for (;;) held.push(new Uint8Array(16 << 20).fill(120));
    }
    if (this.mode === 7) {
      let n = 0;
      for (;;) n = (n + 1) | 0;
    }
    return [];
  }
}

export const { allocation, allocationColumns } = exportStrategy(Misbehave);
