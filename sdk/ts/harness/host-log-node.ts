// The world's host-log under Node (unit tests): lines to stderr.
import type { Level } from "../lib/world/interfaces/forecast-plugins-host-log.js";

export function log(level: Level, message: string): void {
  process.stderr.write(`[${level}] ${message}\n`);
}
