// Prometheus text metrics of this process: counters and histograms, no dependency.

type Labels = Record<string, string>;

const labelText = (labels: Labels) => {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${value.replace(/["\\\n]/g, '\\$&')}"`);
  return pairs.length ? `{${pairs.join(',')}}` : '';
};

/** A monotonically increasing count, by label set. */
export class Counter {
  private readonly values = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}

  /** Adds `by` to the series of `labels`. */
  inc(labels: Labels = {}, by = 1): void {
    const key = labelText(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }

  /** The exposition lines of this counter. */
  render(): string[] {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`, ...[...this.values].map(([key, value]) => `${this.name}${key} ${value}`)];
  }
}

/** Observations in cumulative buckets (seconds), by label set. */
export class Histogram {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, private readonly buckets: number[]) {}

  /** Records one observation. */
  observe(value: number, labels: Labels = {}): void {
    const key = labelText(labels);
    const entry = this.series.get(key) ?? { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
    this.buckets.forEach((bound, index) => value <= bound && entry.counts[index]++);
    entry.sum += value;
    entry.count++;
    this.series.set(key, entry);
  }

  /** The exposition lines of this histogram. */
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [key, entry] of this.series) {
      const base = key ? key.slice(1, -1) + ',' : '';
      this.buckets.forEach((bound, index) => lines.push(`${this.name}_bucket{${base}le="${bound}"} ${entry.counts[index]}`));
      lines.push(`${this.name}_bucket{${base}le="+Inf"} ${entry.count}`, `${this.name}_sum${key} ${entry.sum}`, `${this.name}_count${key} ${entry.count}`);
    }
    return lines;
  }
}

/** Every metric this process keeps. */
export const metrics = {
  httpResponses: new Counter('shutterbus_http_responses_total', 'HTTP responses by route and status.'),
  httpDuration: new Histogram('shutterbus_http_duration_seconds', 'HTTP response time by route.', [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]),
  renders: new Counter('shutterbus_renders_total', 'Renders ended on this worker, by status and error code.'),
  renderDuration: new Histogram('shutterbus_render_duration_seconds', 'Time from a worker taking a render to its end.', [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 90]),
};

/** The Prometheus text exposition of every metric. */
export function renderMetrics(): string {
  return `${Object.values(metrics).flatMap((metric) => metric.render()).join('\n')}\n`;
}
