// The slice of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  /** Runs a load test and resolves with its summary. */
  export default function autocannon(options: {
    url: string;
    connections: number;
    duration: number;
    headers?: Record<string, string>;
  }): Promise<{
    requests: { average: number };
    statusCodeStats?: Record<string, { count: number }>;
  }>;
}
