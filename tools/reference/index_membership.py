"""Index membership and identifiers from the pinned pytickersymbols wheel.

Reads `pytickersymbols/indices_data.py` out of the wheel (a Python literal,
read with `ast.literal_eval`, never imported or executed) and writes one CSV
row per company and index: the index, the company's name, its Yahoo symbols
(`symbol` first, then the other listings, `|`-separated) and its ISINs.
Standard library only, so any Python 3 runs it.

    python3 tools/reference/index_membership.py WHEEL OUT.csv
"""

import ast
import csv
import sys
import zipfile

MEMBER = "pytickersymbols/indices_data.py"


def main(wheel: str, out: str) -> None:
    source = zipfile.ZipFile(wheel).read(MEMBER).decode("utf-8")
    module = ast.parse(source)
    indices = None
    for node in module.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "INDICES" for t in node.targets
        ):
            indices = ast.literal_eval(node.value)
    if not isinstance(indices, dict):
        sys.exit(f"{wheel}: no INDICES literal in {MEMBER}")
    rows = 0
    with open(out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["index", "name", "symbols", "isins", "country"])
        for key in sorted(indices):
            for c in indices[key].get("companies", []):
                symbols = []
                for s in [c.get("symbol")] + [x.get("yahoo") for x in c.get("symbols", [])]:
                    if s and s not in symbols:
                        symbols.append(s)
                w.writerow(
                    [
                        key,
                        c.get("name", ""),
                        "|".join(symbols),
                        "|".join(c.get("isins", []) or []),
                        c.get("country", ""),
                    ]
                )
                rows += 1
    print(f"{out}: {rows} memberships in {len(indices)} indices")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
