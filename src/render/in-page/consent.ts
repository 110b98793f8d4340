// In every document of a render with block_cookie_banners, before autoconsent (src/render/steps/consent.ts).

/** The messages of autoconsent this page side answers or passes on. */
type AutoconsentMessage =
  | { type: 'init' }
  | {
      type: 'report';
      instanceId: string;
      mainFrame: boolean;
      state: { lifecycle: string; findCmpAttempts: number };
    }
  | { type: 'other' };

/** What autoconsent's Playwright bundle looks for on the global object, and our binding. */
type AutoconsentGlobals = {
  autoconsentSendMessage?: (message: AutoconsentMessage) => Promise<void>;
  autoconsentReceiveMessage?: (message: object) => void;
} & Record<string, unknown>;

/**
 * Answers autoconsent's init request with `rules` (its compact rules, as JSON) and `config`, and
 * passes its state reports to the binding `binding`. Does nothing in a document without the
 * binding, or where it ran already.
 */
export function connectAutoconsent(binding: string, config: object, rules: string): void {
  // The global object, as autoconsent and the binding use it.
  const scope = globalThis as unknown as AutoconsentGlobals;
  const report = scope[binding];
  if (typeof report !== 'function' || scope.autoconsentSendMessage) return;
  scope.autoconsentSendMessage = (message) => {
    if (message.type === 'init') {
      const answer = { type: 'initResp', config, rules: { autoconsent: [], compact: JSON.parse(rules) } };
      setTimeout(() => scope.autoconsentReceiveMessage?.(answer), 0);
    } else if (message.type === 'report') {
      const { instanceId, mainFrame, state } = message;
      report(
        JSON.stringify({ id: instanceId, top: mainFrame, lifecycle: state.lifecycle, attempts: state.findCmpAttempts }),
      );
    }
    return Promise.resolve();
  };
}
