#!/usr/bin/env python3
"""Writes the summary rows the benches collected (BENCH_SUMMARY, one
Markdown row each) into docs/BENCHMARKS.md between the two markers below,
with when and where they were measured. `make bench` runs it last.

usage: table.py SUMMARY_FILE BENCHMARKS_MD
"""
import datetime
import os
import platform
import sys

BEGIN = "<!-- make bench: begin -->"
END = "<!-- make bench: end -->"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> int:
    summary, doc = sys.argv[1], sys.argv[2]
    with open(summary, encoding="utf-8") as f:
        rows = [line.rstrip("\n") for line in f if line.startswith("|")]
    if not rows:
        print(f"{summary} holds no rows: did the benches run?", file=sys.stderr)
        return 1
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = os.getloadavg()[0]
    table = "\n".join(
        [
            BEGIN,
            f"Measured {now} by `make bench` on {cpu_model()}, {os.cpu_count()} cores "
            f"(load average {load:.1f} at the end of the run). Ratios are measured back to "
            "back in the same run.",
            "",
            "| measure | measured | target | verdict |",
            "|---|---|---|---|",
            *rows,
            END,
        ]
    )
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + table + rest.split(END, 1)[1]
    else:
        # First time: right after the title and the introduction.
        head, sep, rest = text.partition("\n## ")
        text = head.rstrip("\n") + "\n\n## Summary (`make bench`)\n\n" + table + "\n" + sep + rest
    with open(doc, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{len(rows)} figures written to {doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
