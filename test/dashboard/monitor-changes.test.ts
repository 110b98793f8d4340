// A monitor's page: each change with its captures, and for a monitor that compares text the changed lines, escaped.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Monitor } from '../../src/domain/monitor.ts';
import { monitorPage } from '../../src/http/dashboard/views/monitors.ts';

const page = suite('dashboard: a monitor’s change history');

const monitor: Monitor = {
  monitor_id: 'mon_0123456789abcdef',
  workspace_id: 'ws_1',
  status: 'active',
  interval: 3600,
  threshold: 0.01,
  compare: 'text',
  webhook_url: 'https://hooks.example.com/x',
  target: 'https://example.com/terms',
  format: 'png',
  sealed_options: '',
  created_at: '2026-12-07T10:00:00.000Z',
  updated_at: '2026-12-07T10:00:00.000Z',
  generation: 1,
  next_run_at: '2026-12-07T11:00:00.000Z',
  changes: [
    {
      at: '2026-12-07T10:00:00.000Z',
      render_id: 'r1',
      changed_share: 0.0002,
      changed_pixels: 184,
      file_name: 'after.png',
      previous_file_name: 'before.png',
      diff_file_name: 'diff.png',
      text_diff: [
        { before: 'Pro $19', after: 'Pro $24' },
        { before: null, after: '<script>alert(1)</script> Prices may change.' },
        { before: 'Refunds within 14 days.', after: null },
      ],
    },
  ],
};

page('the changed lines are shown under their change: removed struck, added underlined, escaped', () => {
  const text = monitorPage({
    viewer: { email: 'owner@example.com', workspaceId: 'ws_1', workspaceIds: ['ws_1'], csrf: 't' },
    monitor,
    manager: false,
    fileUrl: (name) => `/files/${name}`,
  }).text;
  assert.match(text, '<del>Pro $19</del> → <ins>Pro $24</ins>');
  assert.match(text, '<li><ins>&lt;script&gt;alert(1)&lt;/script&gt; Prices may change.</ins></li>');
  assert.match(text, '<li><del>Refunds within 14 days.</del></li>');
  assert.match(text, '184 pixels');
  assert.match(text, 'compares text');
  assert.not.match(text, '<script>alert');
});

page.run();
