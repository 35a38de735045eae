#!/usr/bin/env node
// componentize-js's `--wizer-bin`: runs the real wizer (the npm package
// @bytecodealliance/wizer, installed beside componentize-js), then merges
// the snapshot's active data segments. Wizer writes up to 10,000 of them
// (one per run of non-zero bytes in SpiderMonkey's initialised heap); the
// server refuses an upload with more than 4,096 (its load bounds,
// host/research/src/authored.rs). Merging the segments separated by the
// smallest gaps (filled with zeros, which is what the memory holds there)
// leaves at most MAX_SEGMENTS of them and the same initial memory.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const MAX_SEGMENTS = 1024;

// The tools `make ts-sdk` installs (componentize-js runs this script with an
// environment of its own).
const root = fileURLToPath(new URL("../../../target/ts-sdk/node_modules", import.meta.url));
const helpers = join(root, "@bytecodealliance/wizer/package-helpers.js");
const { pkgForCurrentPlatform } = await import(pathToFileURL(helpers).href);
const binary = (await import(pathToFileURL(join(root, pkgForCurrentPlatform(), "index.js")).href)).default;
const args = process.argv.slice(2);
const run = spawnSync(binary, args, { stdio: "inherit" });
if (run.status !== 0) process.exit(run.status ?? 1);
const out = args.find((a) => a.startsWith("-o=")).slice(3);
writeFileSync(out, mergeDataSegments(readFileSync(out)));

function uleb(buf, pos) {
  let value = 0, shift = 0, byte;
  do {
    byte = buf[pos++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return [value, pos];
}

function sleb32(buf, pos) {
  let value = 0, shift = 0, byte;
  do {
    byte = buf[pos++];
    value |= (byte & 0x7f) << shift;
    shift += 7;
  } while (byte & 0x80);
  if (shift < 32 && byte & 0x40) value |= -1 << shift;
  return [value >>> 0, pos];
}

function encodeUleb(value) {
  const bytes = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    bytes.push(byte);
  } while (value > 0);
  return Buffer.from(bytes);
}

function encodeSleb32(value) {
  const bytes = [];
  value |= 0;
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    if ((value === 0 && !(byte & 0x40)) || (value === -1 && byte & 0x40)) {
      bytes.push(byte);
      return Buffer.from(bytes);
    }
    bytes.push(byte | 0x80);
  }
}

/** The data section's segments; null when one is not a plain active
 * segment of memory 0 at an i32.const offset (then nothing is merged). */
function parseSegments(body) {
  let [count, pos] = uleb(body, 0);
  const segments = [];
  for (let i = 0; i < count; i++) {
    let flags;
    [flags, pos] = uleb(body, pos);
    if (flags !== 0 || body[pos] !== 0x41) return null;
    let offset, len;
    [offset, pos] = sleb32(body, pos + 1);
    if (body[pos++] !== 0x0b) return null;
    [len, pos] = uleb(body, pos);
    segments.push({ offset, bytes: body.subarray(pos, pos + len) });
    pos += len;
  }
  return segments;
}

/** At most MAX_SEGMENTS segments: the smallest gaps filled with zeros. */
function merge(segments) {
  segments.sort((a, b) => a.offset - b.offset);
  const gaps = [];
  for (let i = 1; i < segments.length; i++) {
    const end = segments[i - 1].offset + segments[i - 1].bytes.length;
    if (segments[i].offset < end) return null; // overlapping: leave as is
    gaps.push([segments[i].offset - end, i]);
  }
  const join = new Set(
    gaps
      .sort((a, b) => a[0] - b[0] || a[1] - b[1])
      .slice(0, Math.max(0, segments.length - MAX_SEGMENTS))
      .map(([, i]) => i),
  );
  const merged = [];
  for (const [i, s] of segments.entries()) {
    if (join.has(i)) merged[merged.length - 1].parts.push(s);
    else merged.push({ offset: s.offset, parts: [s] });
  }
  return merged.map(({ offset, parts }) => {
    const last = parts[parts.length - 1];
    const bytes = Buffer.alloc(last.offset + last.bytes.length - offset);
    for (const p of parts) bytes.set(p.bytes, p.offset - offset);
    return { offset, bytes };
  });
}

function encodeSegments(segments) {
  const parts = [encodeUleb(segments.length)];
  for (const s of segments) {
    parts.push(Buffer.from([0x00, 0x41]), encodeSleb32(s.offset), Buffer.from([0x0b]));
    parts.push(encodeUleb(s.bytes.length), s.bytes);
  }
  return Buffer.concat(parts);
}

function section(id, body) {
  return Buffer.concat([Buffer.from([id]), encodeUleb(body.length), body]);
}

/** The module with its data section merged (and its data count section
 * updated), or unchanged when there is nothing to merge. */
function mergeDataSegments(wasm) {
  const sections = [];
  let pos = 8;
  while (pos < wasm.length) {
    const id = wasm[pos];
    const [size, start] = uleb(wasm, pos + 1);
    sections.push({ id, start, end: start + size, raw: wasm.subarray(pos, start + size) });
    pos = start + size;
  }
  const data = sections.find((s) => s.id === 11);
  const segments = data && parseSegments(wasm.subarray(data.start, data.end));
  if (!segments || segments.length <= MAX_SEGMENTS) return wasm;
  const merged = merge(segments);
  if (!merged) return wasm;
  const parts = [wasm.subarray(0, 8)];
  for (const s of sections) {
    if (s.id === 11) parts.push(section(11, encodeSegments(merged)));
    else if (s.id === 12) parts.push(section(12, encodeUleb(merged.length)));
    else parts.push(s.raw);
  }
  return Buffer.concat(parts);
}
