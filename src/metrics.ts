// Prometheus text metrics of this process: counters and histograms, no dependency.

type Labels = Record<string, string>;

// On the hot path of every response: a plain loop, escaping only values that need it.
const labelText = (labels: Labels) => {
  let text = '';
  for (const name in labels) {
    const value = labels[name];
    text += `${text ? ',' : ''}${name}="${/["\\\n]/.test(value) ? value.replace(/["\\\n]/g, '\\$&') : value}"`;
  }
  return text ? `{${text}}` : '';
};

// The series of `labels` in `all`, made on first use.
function seriesOf<T>(all: Map<string, T>, labels: Labels, make: () => T): T {
  const key = labelText(labels);
  let series = all.get(key);
  if (!series) all.set(key, (series = make()));
  return series;
}

/** One label set of a counter. */
class CounterSeries {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

/** A monotonically increasing count, by label set. */
export class Counter {
  private readonly series = new Map<string, CounterSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** The series of `labels`; a hot path with fixed labels keeps it and counts on it directly. */
  labels(labels: Labels = {}): CounterSeries {
    return seriesOf(this.series, labels, () => new CounterSeries());
  }

  /** Adds `by` to the series of `labels`. */
  inc(labels: Labels = {}, by = 1): void {
    this.labels(labels).inc(by);
  }

  /** The exposition lines of this counter. */
  render(): string[] {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} counter`,
      ...[...this.series].map(([key, series]) => `${this.name}${key} ${series.value}`),
    ];
  }
}

/** One label set of a histogram: a count per bucket bound, the sum and the count. */
class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;
  constructor(private readonly buckets: number[]) {
    this.counts = buckets.map(() => 0);
  }

  observe(value: number): void {
    for (let index = 0; index < this.buckets.length; index++) if (value <= this.buckets[index]) this.counts[index]++;
    this.sum += value;
    this.count++;
  }
}

/** Observations in cumulative buckets (seconds), by label set. */
export class Histogram {
  private readonly series = new Map<string, HistogramSeries>();
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: number[],
  ) {}

  /** The series of `labels`; a hot path with fixed labels keeps it and observes on it directly. */
  labels(labels: Labels = {}): HistogramSeries {
    return seriesOf(this.series, labels, () => new HistogramSeries(this.buckets));
  }

  /** Records one observation. */
  observe(value: number, labels: Labels = {}): void {
    this.labels(labels).observe(value);
  }

  /** The exposition lines of this histogram. */
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [key, entry] of this.series) {
      const base = key ? `${key.slice(1, -1)},` : '';
      this.buckets.forEach((bound, index) => {
        lines.push(`${this.name}_bucket{${base}le="${bound}"} ${entry.counts[index]}`);
      });
      lines.push(
        `${this.name}_bucket{${base}le="+Inf"} ${entry.count}`,
        `${this.name}_sum${key} ${entry.sum}`,
        `${this.name}_count${key} ${entry.count}`,
      );
    }
    return lines;
  }
}

/** Every metric this process keeps. */
export const metrics = {
  httpResponses: new Counter('shutterbus_http_responses_total', 'HTTP responses by route and status.'),
  httpDuration: new Histogram(
    'shutterbus_http_duration_seconds',
    'HTTP response time by route.',
    [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  ),
  renders: new Counter('shutterbus_renders_total', 'Renders ended on this worker, by status and error code.'),
  renderDuration: new Histogram(
    'shutterbus_render_duration_seconds',
    'Time from a worker taking a render to its end.',
    [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 90],
  ),
  browserRestarts: new Counter(
    'shutterbus_browser_restarts_total',
    "Times this worker's Chromium was lost (crashed, killed or hung) and launched again.",
  ),
  pagesOpened: new Counter(
    'shutterbus_render_pages_opened_total',
    'Browser pages (each a context and renderer) a worker opened: on a render path (for=render) or ahead of one (for=spare).',
  ),
  webhookAttempts: new Counter(
    'shutterbus_webhook_attempts_total',
    'Webhook attempts by outcome (delivered, failed, refused, gone).',
  ),
  webhookDeadLetters: new Counter(
    'shutterbus_webhook_dead_letters_total',
    'Webhook deliveries that used every attempt and were dead-lettered.',
  ),
};

/**
 * A gauge read when /metrics is scraped (a queue's depth, say), so that nothing is polled between
 * scrapes. `read` gives one value per label set; a read that fails leaves its gauge out of the answer.
 */
export interface GaugeCollector {
  name: string;
  help: string;
  read(): Promise<{ labels: Labels; value: number }[]>;
}

const collectors: GaugeCollector[] = [];

/** Adds a gauge read at every scrape of this process's /metrics; one of the same name is replaced. */
export function addGaugeCollector(collector: GaugeCollector): void {
  const index = collectors.findIndex((known) => known.name === collector.name);
  if (index === -1) collectors.push(collector);
  else collectors[index] = collector;
}

async function collectedLines(): Promise<string[]> {
  const read = await Promise.all(collectors.map((collector) => collector.read().catch(() => undefined)));
  return collectors.flatMap((collector, index) => {
    const values = read[index];
    if (!values) return [];
    return [
      `# HELP ${collector.name} ${collector.help}`,
      `# TYPE ${collector.name} gauge`,
      ...values.map(({ labels, value }) => `${collector.name}${labelText(labels)} ${value}`),
    ];
  });
}

/** The Prometheus text exposition of every metric. */
export async function renderMetrics(): Promise<string> {
  return `${[...Object.values(metrics).flatMap((metric) => metric.render()), ...(await collectedLines())].join('\n')}\n`;
}
