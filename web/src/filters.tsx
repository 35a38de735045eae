// Filter fields that more than one page shows the same way.
import { CATEGORIES } from "./api/endpoints";

/** The horizons the grading run computes, in days. */
export const PERIODS = ["7", "30", "90", "180", "365"];

/** Marks a field the server refused (aria-invalid, described by the page's error). */
export type Invalid = (field: string) => Record<string, unknown>;

/**
 * The horizon and the metric of a graded view, as two fields whose ids are
 * `${id}-period` and `${id}-metric`; `onChange` gets the one that changed.
 */
export function HorizonMetricFields({
  id,
  period,
  metric,
  onChange,
  invalid,
}: {
  id: string;
  period: string;
  metric: string;
  onChange: (next: { return_period: string } | { metric: string }) => void;
  invalid: Invalid;
}) {
  return (
    <>
      <div class="field">
        <label for={`${id}-period`}>Horizon</label>
        <select id={`${id}-period`} value={period} onChange={(e) => onChange({ return_period: (e.target as HTMLSelectElement).value })} {...invalid("return_period")}>
          {PERIODS.map((d) => (
            <option key={d} value={d}>
              {d} days
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for={`${id}-metric`}>Metric</label>
        <select id={`${id}-metric`} value={metric} onChange={(e) => onChange({ metric: (e.target as HTMLSelectElement).value })} {...invalid("metric")}>
          <option value="return">Return</option>
          <option value="sharpe">Sharpe</option>
          <option value="sortino">Sortino</option>
        </select>
      </div>
    </>
  );
}

/**
 * The category filter (`${id}` is the select's id): every category, or one;
 * a category the URL names that the app does not know stays shown, marked.
 */
export function CategoryField({
  id,
  value,
  onChange,
  invalid,
}: {
  id: string;
  value: string;
  onChange: (next: { category: string }) => void;
  invalid?: Invalid;
}) {
  return (
    <div class="field">
      <label for={id}>Category</label>
      <select id={id} value={value} onChange={(e) => onChange({ category: (e.target as HTMLSelectElement).value })} {...invalid?.("category")}>
        <option value="">All categories</option>
        {CATEGORIES.map((c) => (
          <option key={c}>{c}</option>
        ))}
        {value && !(CATEGORIES as readonly string[]).includes(value) && <option value={value}>{value} (unknown)</option>}
      </select>
    </div>
  );
}
