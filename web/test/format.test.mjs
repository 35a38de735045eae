// The one number formatter (src/format.ts): signs, thousands separators
// and decimals by kind, as every page writes them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { compact, corr, int, num, pct, plural, price, signedNum, signedPct, tags } from "./fmt.mjs";

test("percentages: separators at any size, digits by kind, a missing value is a dash", () => {
  assert.equal(pct(0.1234), "12.34 %");
  assert.equal(pct(25.261), "2,526.10 %");
  assert.equal(pct(-0.5), "-50.00 %");
  assert.equal(pct(0.6789, 0), "68 %");
  assert.equal(pct(null), "—");
  assert.equal(pct(Number.NaN), "—");
});

test("signed percentages carry + or a true minus, none at zero", () => {
  assert.equal(signedPct(25.261), "+2,526.1\u00a0%");
  assert.equal(signedPct(-0.098), "−9.8\u00a0%");
  assert.equal(signedPct(0.0001), "0.0\u00a0%");
  assert.equal(signedPct(undefined), "—");
});

test("signed amounts carry + or a true minus and two decimals, none at zero", () => {
  assert.equal(signedNum(1234.5), "+1,234.50");
  assert.equal(signedNum(-3), "−3.00");
  assert.equal(signedNum(0.001), "0.00");
  assert.equal(signedNum(null), "—");
});

test("prices: two decimals from 1 up, four significant digits below", () => {
  assert.equal(price(187.234), "187.23");
  assert.equal(price(104523.456), "104,523.46");
  assert.equal(price(1.08234), "1.08");
  assert.equal(price(0.0123456), "0.01235");
  assert.equal(price(null), "—");
});

test("counts, figures, axis labels, correlations and plurals", () => {
  assert.equal(int(12345), "12,345");
  assert.equal(num(1234.5), "1,234.50");
  assert.equal(compact(1_250_000), "1.25M");
  assert.equal(compact(3.14159), "3.142");
  assert.equal(compact(undefined), "");
  assert.equal(corr(-0.0123), "−0.01");
  assert.equal(corr(0.004), "0.004");
  assert.equal(corr(-0.0001), "0.000");
  assert.equal(plural(1, "episode"), "1 episode");
  assert.equal(plural(1024, "episode"), "1,024 episodes");
  assert.equal(plural(0, "match", "matches"), "0 matches");
});

test("industry tags the catalog ran together come apart; title-case names stay whole", () => {
  assert.deepEqual(tags("Enterprise software Business software Cloud computing Computer hardware Consulting"), [
    "Enterprise software",
    "Business software",
    "Cloud computing",
    "Computer hardware",
    "Consulting",
  ]);
  assert.deepEqual(tags("Consumer Electronics"), ["Consumer Electronics"]);
  assert.deepEqual(tags("Banking; Insurance, Asset management"), ["Banking", "Insurance", "Asset management"]);
  assert.deepEqual(tags(""), []);
  assert.deepEqual(tags(null), []);
});
