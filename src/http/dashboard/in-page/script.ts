// In the dashboard's pages (served at /dashboard/assets/copy.js; type-checked with the DOM library
// alone, its own tsconfig.json): reveals the copy buttons and copies their target's text; on the
// playground, renders without leaving the page (the same form post, its answer's result swapped in
// and scrolled to), showing the time elapsed meanwhile and a Cancel button that stops waiting.
// Every page works without it.

export function dashboardScript(): void {
  const revealCopyButtons = (root: ParentNode) => {
    for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-copy]')) button.hidden = false;
  };
  revealCopyButtons(document);

  document.addEventListener('click', (event) => {
    const button = (event.target as Element | null)?.closest?.('button[data-copy]');
    if (!button) return;
    const target = document.getElementById(button.getAttribute('data-copy') ?? '');
    if (!target || !navigator.clipboard) return;
    void navigator.clipboard.writeText((target.textContent ?? '').trim()).then(() => {
      const label = button.textContent;
      button.textContent = 'Copied';
      setTimeout(() => {
        button.textContent = label;
      }, 1500);
    });
  });

  const playground = document.getElementById('playground') as HTMLFormElement | null;
  if (!playground || !window.fetch || !window.DOMParser || !window.AbortController) return;
  const byId = <E extends HTMLElement>(id: string) => document.getElementById(id) as E;
  let running: AbortController | null = null;
  byId('render-cancel').addEventListener('click', () => running?.abort());

  playground.addEventListener('submit', (event) => {
    event.preventDefault();
    if (running) return;
    const button = byId<HTMLButtonElement>('render');
    const cancel = byId('render-cancel');
    const state = byId('render-state');
    const elapsed = byId('render-elapsed');
    const result = byId('result');
    const controller = new AbortController();
    const started = Date.now();
    const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
    const tick = () => {
      elapsed.textContent = seconds();
    };
    running = controller;
    tick();
    const timer = setInterval(tick, 100);
    button.disabled = true;
    cancel.hidden = false;
    state.className = 'muted small';
    state.textContent = 'Rendering…';
    result.setAttribute('aria-busy', 'true');
    const body = new URLSearchParams(new FormData(playground) as unknown as Record<string, string>);
    fetch(playground.action, { method: 'POST', body, credentials: 'same-origin', signal: controller.signal })
      .then(async (response) => ({ url: response.url, text: await response.text() }))
      .then((answer) => {
        const fresh = new DOMParser().parseFromString(answer.text, 'text/html').getElementById('result');
        if (!fresh) throw new Error('no result in the answer');
        byId('result').replaceWith(fresh);
        revealCopyButtons(fresh);
        if (answer.url && answer.url !== location.href.split('#')[0]) history.pushState(null, '', answer.url);
        // A failure reads as one, with its code: never as done.
        const code = fresh.querySelector('#error-code');
        if (code) {
          state.className = 'small failed';
          const title = fresh.querySelector('#failure-title')?.textContent ?? 'Failed';
          state.textContent = `${title} after ${seconds()}: ${(code.textContent ?? '').trim()}`;
        } else {
          state.className = 'muted small';
          state.textContent = `Rendered in ${seconds()}.`;
        }
        // Into view unless it is there already (beside the form on a wide screen).
        const box = fresh.getBoundingClientRect();
        if (box.top < 0 || box.top > window.innerHeight - 80) fresh.scrollIntoView({ block: 'start' });
      })
      .catch(() => {
        if (!controller.signal.aborted) {
          playground.submit();
          return;
        }
        state.className = 'small failed';
        state.textContent = `Cancelled after ${seconds()}. A render that had started still finishes (and counts if it succeeds): it appears on the Renders page.`;
      })
      .finally(() => {
        clearInterval(timer);
        running = null;
        elapsed.textContent = '';
        button.disabled = false;
        cancel.hidden = true;
        result.removeAttribute('aria-busy');
      });
  });
  window.addEventListener('popstate', () => location.reload());
}
