// In the page, for the document outputs (src/render/outputs/document.ts).

/** The page's main content: its title and its HTML. */
export type Article = { title: string; content: string };

/** Readability's class, as Readability.js defines it where it runs. */
type Readability = new (document: Document) => { parse(): { title?: string | null; content?: string | null } | null };

/**
 * The main content of the page as Readability finds it, or its whole body when it finds no article.
 * Readability works on a copy: of the document, or with `shadowHtml` (the document serialised with
 * its shadow roots) a document parsed from it and flattened, each host's shadow content moved into
 * the host in place of its light children (closed roots opened, as only this copy sees them), slots
 * filled with the children assigned to them.
 */
export function readArticle(Readability: Readability, shadowHtml: string | null): Article {
  const flatten = (root: Document | ShadowRoot) => {
    for (const host of [...root.querySelectorAll('*')]) {
      const shadow = host.shadowRoot;
      if (!shadow) continue;
      flatten(shadow);
      const light = [...host.childNodes];
      for (const slot of [...shadow.querySelectorAll('slot')]) {
        const name = slot.getAttribute('name');
        const assigned = light.filter((node) => (node instanceof Element ? node.getAttribute('slot') : null) === name);
        slot.replaceWith(...(assigned.length > 0 ? assigned : [...slot.childNodes]));
      }
      host.replaceChildren(...shadow.childNodes);
    }
  };
  let copy: Document;
  if (shadowHtml === null) {
    copy = document.cloneNode(true) as Document;
  } else {
    copy = Document.parseHTMLUnsafe(shadowHtml.replaceAll('shadowrootmode="closed"', 'shadowrootmode="open"'));
    flatten(copy);
  }
  const article = new Readability(copy).parse();
  if (article?.content) return { title: article.title || document.title, content: article.content };
  return { title: document.title, content: document.body ? document.body.innerHTML : '' };
}

/** The document's title and language (`<html lang>`), trimmed; empty when it gives none. */
export function readDocumentFacts(): { title: string; language: string } {
  return { title: document.title.trim(), language: document.documentElement.lang.trim() };
}
