// Small statistics helpers (nearest-rank percentiles on the measured samples).
export function percentile(values, p) {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!v.length) return null;
  if (v.length === 1) return v[0];
  const rank = Math.ceil((p / 100) * v.length);
  return v[Math.min(v.length, Math.max(1, rank)) - 1];
}

export function median(values) {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!v.length) return null;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export function summary(values) {
  const v = values.filter(Number.isFinite);
  if (!v.length) return null;
  return {
    n: v.length,
    median: round(median(v)),
    p95: round(percentile(v, 95)),
    min: round(Math.min(...v)),
    max: round(Math.max(...v)),
  };
}

export function round(x, digits = 1) {
  if (x === null || x === undefined || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return null;
  return round(a / b, 2);
}
