// `make bench`'s PDF rows, side by side: a plain PDF of the heavy page, the same as PDF/A-2b
// (Ghostscript), and a merge of 10 sources (POST /api/pdf/merge): wall time and CPU of the service,
// Chromium and the PDF tools (children of the service), each the median of a few renders.

import { CpuMeter, listProcesses, median } from './measure.ts';
import type { BenchStack } from './stack.ts';

/** One kind of PDF: median wall time, its size, and CPU ms per group of the median render. */
export interface PdfCost {
  wallMs: number;
  bytes: number;
  cpuMs: Record<string, number>;
}

/** Renders of each kind measured (after one not measured). */
const RENDERS = 5;
const MERGE_SOURCES = 10;

const isPdfTool = (argv: string[]) => /(^|\/)(gs|qpdf|prlimit)$/.test(argv[0] ?? '');

/** Measures a plain PDF, a PDF/A-2b and a 10-source merge of `url`. */
export async function measurePdfs(stack: BenchStack, url: string): Promise<Record<string, PdfCost>> {
  const { base, workspace } = stack;
  const headers = { 'x-access-key': workspace.access_key, 'content-type': 'application/json' };
  const post = async (path: string, body: Record<string, unknown>) => {
    const response = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const bytes = await response.arrayBuffer();
    if (response.status !== 200)
      throw new Error(`${path} answered ${response.status}: ${Buffer.from(bytes).toString().slice(0, 200)}`);
    return bytes.byteLength;
  };
  const kinds: Record<string, () => Promise<number>> = {
    'plain pdf': () => post('/api/take', { url, format: 'pdf' }),
    'pdf_archive=a-2b': () => post('/api/take', { url, format: 'pdf', pdf_archive: 'a-2b' }),
    [`merge of ${MERGE_SOURCES}`]: () =>
      post('/api/pdf/merge', { timeout: 90, sources: Array.from({ length: MERGE_SOURCES }, () => ({ url })) }),
  };
  // The PDF tools are the service's children: counted apart from it.
  const labels = () => {
    const labelled = stack.labels();
    const argv = new Map(listProcesses().map((proc) => [proc.pid, proc.argv]));
    for (const [pid, label] of labelled)
      if (label === 'service' && isPdfTool(argv.get(pid) ?? [])) labelled.set(pid, 'pdf tools');
    return labelled;
  };
  const costs: Record<string, PdfCost> = {};
  for (const [name, render] of Object.entries(kinds)) {
    await render(); // the first of a kind (a tool's first start, a page's first load) is not measured
    const runs: PdfCost[] = [];
    for (let index = 0; index < RENDERS; index++) {
      const meter = new CpuMeter(labels).start();
      const started = performance.now();
      const bytes = await render();
      const wallMs = performance.now() - started;
      const cpuMs = Object.fromEntries(Object.entries(meter.stop()).map(([label, ms]) => [label, Math.round(ms)]));
      runs.push({ wallMs, bytes, cpuMs });
    }
    const middle = median(runs.map((run) => run.wallMs));
    const typical = runs.reduce((best, run) =>
      Math.abs(run.wallMs - middle) < Math.abs(best.wallMs - middle) ? run : best,
    );
    costs[name] = { ...typical, wallMs: Math.round(middle) };
  }
  return costs;
}

/** The report's lines for `costs`, each kind beside the plain PDF. */
export function pdfLines(costs: Record<string, PdfCost>): string[] {
  const plain = costs['plain pdf']?.wallMs ?? 0;
  const groups = (cpu: Record<string, number>) => {
    const chromium = Object.entries(cpu)
      .filter(([label]) => label.startsWith('chromium'))
      .reduce((sum, [, ms]) => sum + ms, 0);
    return `service ${cpu.service ?? 0} ms, Chromium ${chromium} ms, PDF tools ${cpu['pdf tools'] ?? 0} ms`;
  };
  return [
    'PDFs of the heavy page (median of 5; CPU of that render)',
    ...Object.entries(costs).map(
      ([name, cost]) =>
        `  ${name.padEnd(18)} wall ${String(cost.wallMs).padStart(6)} ms (× ${(cost.wallMs / plain).toFixed(2)}), ${Math.round(cost.bytes / 1024)} KB; CPU: ${groups(cost.cpuMs)}`,
    ),
  ];
}
