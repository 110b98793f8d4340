// /proc files kept open and read again (src/render/browser/processes.ts ProcFile), and the renderer
// memory watch that reads them many times a second without leaving a file open behind it.

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ProcFile, TreeMemory, treeMemoryMb } from '../../src/render/browser/processes.ts';
import { RendererMemoryWatch } from '../../src/render/browser/renderer-memory.ts';
import { listProcesses, processTree, pssMb } from '../helpers/processes.ts';
import { startRenderRig, type RenderRig } from '../helpers/render.ts';
import { waitFor } from '../helpers/wait.ts';

const test = suite('/proc files kept open');
/** This process's open files into other processes' /proc directories (starting with `prefix`). */
const procFilesOpen = (prefix = '/proc/') =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(prefix) && !target.startsWith(`/proc/${process.pid}/`);
    } catch {
      return false; // The directory's own descriptor, closed once read.
    }
  }).length;
const residentPages = (text: string | null) => Number(text!.split(' ')[1]);

test('a read is the file as it is now, not as it was when opened', () => {
  const statm = new ProcFile('/proc/self/statm');
  try {
    const before = residentPages(statm.read());
    const held = Buffer.alloc(64 * 1024 * 1024, 1);
    const after = residentPages(statm.read());
    assert.ok(after - before >= (60 * 1024 * 1024) / 4096, `resident pages ${before} → ${after}`);
    assert.is(held[held.length - 1], 1);
  } finally {
    statm.close();
  }
});

test('a file longer than the first buffer is read whole', () => {
  const status = new ProcFile('/proc/self/status');
  try {
    const text = status.read()!;
    assert.ok(text.length > 256, `${text.length} characters`);
    assert.is(text.split('\n')[0], readFileSync('/proc/self/status', 'utf8').split('\n')[0]);
    assert.ok(text.endsWith('\n') && text.includes('VmRSS:'), 'the last lines are there');
  } finally {
    status.close();
  }
});

test("a process gone reads as null, its thread's children as none, and no file stays open", async () => {
  const child = spawn('sleep', ['30']);
  const statm = new ProcFile(`/proc/${child.pid}/statm`);
  const children = new ProcFile(`/proc/${child.pid}/task/${child.pid}/children`);
  assert.ok(residentPages(statm.read()) > 0);
  assert.is(procFilesOpen(`/proc/${child.pid}/`), 2);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  assert.is(statm.read(), null);
  assert.is(children.read(), '');
  children.close();
  statm.close();
  assert.is(statm.read(), null, 'closed');
  assert.is(procFilesOpen(`/proc/${child.pid}/`), 0, 'both closed');
});

/** Resolves once `pid`'s resident size holds within 512 KB for 100 ms (at most 3 s): a child that just grew may still be settling. */
async function residentSettled(pid: number): Promise<void> {
  const resident = () => Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
  let last = resident();
  for (let i = 0; i < 30; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = resident();
    if (Math.abs(now - last) < 512 * 1024) return;
    last = now;
  }
}

test("a tree's memory read again reads smaps only where the resident size moved", async () => {
  // A process that holds 64 MB more each time it is told to.
  const child = spawn(process.execPath, [
    '-e',
    "const held = []; process.stdin.on('data', () => { held.push(Buffer.alloc(64 << 20, 1)); process.stdout.write('+'); });",
  ]);
  const grown = () => new Promise((resolve) => child.stdout.once('data', resolve));
  const memory = new TreeMemory(child.pid!);
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.stdin.write('\n');
    await grown();
    await residentSettled(child.pid!);
    const first = (await memory.readMb())!;
    assert.is(memory.smapsRead, 1);
    assert.is(memory.openFiles(), 1, 'its statm kept open');
    const again = (await memory.readMb())!;
    assert.is(memory.smapsRead, 0, 'nothing moved: the last PSS kept');
    assert.is(again, first);
    child.stdin.write('\n');
    await grown();
    const after = (await memory.readMb())!;
    assert.is(memory.smapsRead, 1, 'read again once it grew');
    assert.ok(after - first >= 60, `${first.toFixed(0)} → ${after.toFixed(0)} MB`);
    assert.ok(Math.abs(after - pssMb([child.pid!])) < 8, 'the PSS it has now');
  } finally {
    memory.close();
    child.kill('SIGKILL');
  }
  assert.is(procFilesOpen(`/proc/${child.pid}/`), 0, 'closed');
  assert.is(await memory.readMb(), null, 'a closed reader reads nothing');
});

const watched = suite('the renderer memory watch and its open files');
let rig: RenderRig;
watched.before(async () => {
  rig = await startRenderRig({ workspaceId: 'ws_proc_files' });
});
watched.after(async () => {
  await rig?.stop();
});

watched('reads the renderers through open files while renders run, and closes them all when stopped', async () => {
  await rig.render('/');
  const baseline = procFilesOpen();
  const kills: number[] = [];
  const watch = new RendererMemoryWatch(rig.host.pid!, 4096, (pid) => kills.push(pid));
  const ended = watch.begin();
  try {
    // The first sample walks the tree; the next ones read the files it opened.
    await waitFor(() => watch.openFiles() > 0, 'the watch opened the renderers and their parents', 5_000);
    await new Promise((resolve) => setTimeout(resolve, 350));
    assert.is(procFilesOpen() - baseline, watch.openFiles(), 'one descriptor for each file it holds');
  } finally {
    ended();
    watch.stop();
  }
  assert.is(watch.openFiles(), 0);
  assert.is(procFilesOpen(), baseline, 'every file closed');
  assert.equal(kills, [], 'nothing over a 4 GB limit');
});

watched('renders one after another walk the tree once a while, and see a renderer started between them', async () => {
  await rig.render('/');
  const spell = async (watch: RendererMemoryWatch) => {
    const ended = watch.begin();
    await new Promise((resolve) => setTimeout(resolve, 150));
    ended();
  };
  const renderersNow = () => {
    const processes = listProcesses();
    const tree = new Set(processTree([rig.host.pid!], processes));
    return processes.filter((p) => tree.has(p.pid) && p.argv.includes('--type=renderer')).map((p) => p.pid);
  };
  // A walk a minute: every spell below after the first reads the parents the walk found.
  const watch = new RendererMemoryWatch(rig.host.pid!, 4096, () => {}, 60_000);
  try {
    await spell(watch);
    assert.is(watch.walks, 1, 'the first sample walks the tree');
    const walked = new Set(watch.renderers());
    // Another workspace's page: a context and a renderer of its own (and a blank one prepared after it).
    await rig.render('/', {}, 'ws_proc_files_other');
    await waitFor(() => renderersNow().some((pid) => !walked.has(pid)), 'a renderer started since the walk', 5_000);
    await spell(watch);
    assert.is(watch.walks, 1, 'the next spell reads the parents the walk found');
    const started = renderersNow().filter((pid) => !walked.has(pid));
    const seen = watch.renderers();
    assert.ok(
      started.every((pid) => seen.includes(pid)),
      `renderers started since the walk ${started.join(' ')}, read ${seen.join(' ')}`,
    );
  } finally {
    watch.stop();
  }
  // A walk every 200 ms: a spell once the last walk is that old walks again.
  const often = new RendererMemoryWatch(rig.host.pid!, 4096, () => {}, 200);
  try {
    await spell(often);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await spell(often);
    assert.is(often.walks, 2, 'walked at each spell');
  } finally {
    often.stop();
  }
});

watched("the browser's memory counts every process below it, renderers too, from one walk", async () => {
  const tree = processTree([rig.host.pid!], listProcesses());
  const renderers = listProcesses().filter((p) => tree.includes(p.pid) && p.argv.includes('--type=renderer'));
  assert.ok(renderers.length > 0, 'a renderer is running');
  // A renderer may change size while the tree is read: the reading is bracketed by two whole-tree
  // readings, one taken just before it and one just after.
  const before = pssMb(tree);
  const read = (await treeMemoryMb(rig.host.pid!))!;
  const after = pssMb(tree);
  const [low, high] = [Math.min(before, after) * 0.9, Math.max(before, after) * 1.1];
  assert.ok(
    read > low && read < high,
    `read ${read.toFixed(0)} MB, the whole tree ${before.toFixed(0)} MB before and ${after.toFixed(0)} MB after`,
  );
});

test.run();
watched.run();
