// What pdf-lib does to a PDF's objects here: metadata, language and displayed title, a text
// watermark, and merging printed documents into one with one outline and one structure tree.
import { readFile } from 'node:fs/promises';
import type * as PdfLib from 'pdf-lib';

// pdf-lib is loaded on the first PDF that needs it, never at start (infra/build.mjs leaves it out of the bundle).
let L: typeof PdfLib;
async function loadPdfLib(): Promise<typeof PdfLib> {
  L ??= await import('pdf-lib');
  return L;
}

/** The watermark's face: Debian's Liberation Sans (fonts-liberation), embedded as a subset. */
const WATERMARK_FONT = '/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf';

/** What to set on a PDF's document information and catalog. */
export interface DocumentFacts {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string;
  /** The document's language: set when the PDF has none. */
  language?: string;
  /** A viewer shows the title in its window, not the file name (PDF/UA). */
  displayTitle?: boolean;
}

/** A text stamped across every page. */
export interface Watermark {
  text: string;
  opacity: number;
  layer: 'over' | 'under';
  /** Gray instead of transparency (PDF/A-1 forbids transparency): what the opacity shows on white. */
  opaque?: boolean;
}

/** The PDF's title in its document information, if it has one. */
export function titleOf(pdf: PdfLib.PDFDocument): string | undefined {
  return pdf.getTitle()?.trim() || undefined;
}

/** The PDF's language (the catalog's /Lang), if it has one. */
export function languageOf(pdf: PdfLib.PDFDocument): string | undefined {
  const lang = pdf.catalog.lookup(L.PDFName.of('Lang'));
  const text = lang && 'decodeText' in lang ? String((lang as { decodeText(): string }).decodeText()) : undefined;
  return text?.trim() || undefined;
}

/** Loads a PDF as pdf-lib edits it, its producer and dates kept as they are. */
export async function loadPdf(bytes: Uint8Array): Promise<PdfLib.PDFDocument> {
  await loadPdfLib();
  return L.PDFDocument.load(bytes, { updateMetadata: false });
}

/** Sets `facts` on `pdf`: each given field of the document information, the language when it has none. */
export function setFacts(pdf: PdfLib.PDFDocument, facts: DocumentFacts): void {
  if (facts.title !== undefined) pdf.setTitle(facts.title, { showInWindowTitleBar: facts.displayTitle === true });
  else if (facts.displayTitle) pdf.catalog.getOrCreateViewerPreferences().setDisplayDocTitle(true);
  if (facts.author !== undefined) pdf.setAuthor(facts.author);
  if (facts.subject !== undefined) pdf.setSubject(facts.subject);
  if (facts.keywords !== undefined) pdf.setKeywords([facts.keywords]);
  if (facts.language !== undefined && languageOf(pdf) === undefined) pdf.setLanguage(facts.language);
}

let watermarkFont: Promise<Uint8Array> | undefined;

/**
 * Stamps `watermark` across the middle of every page along its diagonal, as large as fits, in
 * an embedded font (every font of the file is embedded) and marked as an artifact, so a tagged
 * PDF's readers skip it; `under` puts it before the page's own content.
 */
export async function stampWatermark(pdf: PdfLib.PDFDocument, watermark: Watermark): Promise<void> {
  watermarkFont ??= readFile(WATERMARK_FONT);
  const { default: fontkit } = await import('@pdf-lib/fontkit');
  pdf.registerFontkit(fontkit);
  const font = await pdf.embedFont(await watermarkFont, { subset: true });
  for (const page of pdf.getPages()) stampPage(page, font, watermark);
}

function stampPage(page: PdfLib.PDFPage, font: PdfLib.PDFFont, { text, opacity, layer, opaque }: Watermark): void {
  const { width, height } = page.getSize();
  const { x: left, y: bottom } = page.getMediaBox();
  const angle = Math.atan2(height, width);
  const diagonal = Math.hypot(width, height);
  const size = Math.min(160, (diagonal * 0.7) / Math.max(1, font.widthOfTextAtSize(text, 1)));
  const textWidth = font.widthOfTextAtSize(text, size);
  const textHeight = font.heightAtSize(size, { descender: false });
  // The text turns about its origin: the origin goes where the middle of the text lands mid-page.
  const x = left + width / 2 - (Math.cos(angle) * textWidth) / 2 + (Math.sin(angle) * textHeight) / 2;
  const y = bottom + height / 2 - (Math.sin(angle) * textWidth) / 2 - (Math.cos(angle) * textHeight) / 2;
  const before = contentsOf(page).length;
  page.pushOperators(L.beginMarkedContent('Artifact'));
  page.drawText(text, {
    x,
    y,
    size,
    font,
    rotate: L.degrees((angle * 180) / Math.PI),
    ...(opaque ? { color: L.grayscale(1 - opacity) } : { color: L.grayscale(0), opacity }),
  });
  page.pushOperators(L.endMarkedContent());
  if (layer === 'under') {
    // pdf-lib appends the stamp as the last content stream (the page's own wrapped in q … Q): first, it is under.
    const contents = contentsOf(page);
    const added = contents.slice(before);
    const stamp = added.at(-1);
    if (stamp === undefined) return;
    page.node.set(L.PDFName.of('Contents'), page.doc.context.obj([stamp, ...contents.filter((ref) => ref !== stamp)]));
  }
}

// The page's content streams, as refs.
function contentsOf(page: PdfLib.PDFPage): PdfLib.PDFObject[] {
  const contents = page.node.get(L.PDFName.of('Contents'));
  if (contents === undefined) return [];
  const array = page.doc.context.lookup(contents);
  return array instanceof L.PDFArray ? array.asArray() : [contents];
}

/**
 * The documents one after the other in one PDF: their pages, their outlines one after the other in
 * one outline, and, where they are tagged, their structure trees one after the other in one.
 * The title and the language are the first document's that has one.
 */
export async function mergePdfs(documents: Uint8Array[]): Promise<Uint8Array> {
  await loadPdfLib();
  const merged = await L.PDFDocument.create({ updateMetadata: false });
  const outline = new MergedOutline(merged);
  const structure = new MergedStructure(merged);
  for (const bytes of documents) {
    const source = await loadPdf(bytes);
    const language = languageOf(source);
    if (language !== undefined && languageOf(merged) === undefined) merged.setLanguage(language);
    const title = titleOf(source);
    if (title !== undefined && titleOf(merged) === undefined) merged.setTitle(title);
    const copier = L.PDFObjectCopier.for(source.context, merged.context);
    const keyOffset = structure.nextKey;
    // Pages first: the outline's and the structure's references to them then find the copies.
    for (const page of source.getPages()) {
      const ref = copier.copy(page.ref);
      const leaf = merged.context.lookup(ref);
      if (!(leaf instanceof L.PDFPageLeaf)) throw new Error('a copied page is not a page');
      shiftStructParents(merged, leaf, keyOffset);
      merged.addPage(L.PDFPage.of(leaf, ref, merged));
    }
    outline.append(source, copier);
    structure.append(source, copier, keyOffset);
  }
  outline.finish();
  structure.finish();
  return merged.save();
}

// A page's and its annotations' keys into the structure's parent tree move past the documents before it.
function shiftStructParents(pdf: PdfLib.PDFDocument, leaf: PdfLib.PDFPageLeaf, offset: number): void {
  if (offset === 0) return;
  const shift = (dict: PdfLib.PDFDict, key: string) => {
    const value = dict.get(L.PDFName.of(key));
    if (value instanceof L.PDFNumber) dict.set(L.PDFName.of(key), L.PDFNumber.of(value.asNumber() + offset));
  };
  shift(leaf, 'StructParents');
  const annotations = leaf.lookup(L.PDFName.of('Annots'));
  if (!(annotations instanceof L.PDFArray)) return;
  for (const annotation of annotations.asArray()) {
    const dict = pdf.context.lookup(annotation);
    if (dict instanceof L.PDFDict) shift(dict, 'StructParent');
  }
}

/** The outlines of the documents merged, one after the other at the top level. */
class MergedOutline {
  readonly #pdf: PdfLib.PDFDocument;
  readonly #items: PdfLib.PDFRef[] = [];
  #count = 0;

  constructor(pdf: PdfLib.PDFDocument) {
    this.#pdf = pdf;
  }

  append(source: PdfLib.PDFDocument, copier: PdfLib.PDFObjectCopier): void {
    const outlines = source.catalog.lookupMaybe(L.PDFName.of('Outlines'), L.PDFDict);
    const first = outlines?.get(L.PDFName.of('First'));
    if (!outlines || !(first instanceof L.PDFRef)) return;
    // The top-level items lose their parent before the copy, so the source's outline root is not copied with them.
    const top: PdfLib.PDFRef[] = [];
    for (let item: PdfLib.PDFObject | undefined = first; item instanceof L.PDFRef; ) {
      const dict: PdfLib.PDFDict = source.context.lookup(item, L.PDFDict);
      dict.delete(L.PDFName.of('Parent'));
      top.push(item);
      item = dict.get(L.PDFName.of('Next'));
    }
    for (const item of top) this.#items.push(copier.copy(item));
    const count = outlines.lookupMaybe(L.PDFName.of('Count'), L.PDFNumber)?.asNumber() ?? top.length;
    this.#count += Math.abs(count);
  }

  finish(): void {
    if (this.#items.length === 0) return;
    const { context } = this.#pdf;
    const root = context.nextRef();
    this.#items.forEach((ref, index) => {
      const item = context.lookup(ref, L.PDFDict);
      item.set(L.PDFName.of('Parent'), root);
      const prev = this.#items[index - 1];
      const next = this.#items[index + 1];
      if (prev) item.set(L.PDFName.of('Prev'), prev);
      else item.delete(L.PDFName.of('Prev'));
      if (next) item.set(L.PDFName.of('Next'), next);
      else item.delete(L.PDFName.of('Next'));
    });
    context.assign(
      root,
      context.obj({
        Type: 'Outlines',
        First: this.#items[0],
        Last: this.#items.at(-1)!,
        Count: this.#count,
      }),
    );
    this.#pdf.catalog.set(L.PDFName.of('Outlines'), root);
  }
}

/** The structure trees of the tagged documents merged, their parts one after the other in one Document element. */
class MergedStructure {
  readonly #pdf: PdfLib.PDFDocument;
  readonly #kids: PdfLib.PDFObject[] = [];
  readonly #nums: PdfLib.PDFObject[] = [];
  readonly #root: PdfLib.PDFRef;
  readonly #document: PdfLib.PDFRef;
  nextKey = 0;

  constructor(pdf: PdfLib.PDFDocument) {
    this.#pdf = pdf;
    this.#root = pdf.context.nextRef();
    this.#document = pdf.context.nextRef();
  }

  append(source: PdfLib.PDFDocument, copier: PdfLib.PDFObjectCopier, keyOffset: number): void {
    const root = source.catalog.lookupMaybe(L.PDFName.of('StructTreeRoot'), L.PDFDict);
    const kids = root?.get(L.PDFName.of('K'));
    if (!root || kids === undefined) return;
    const elements = source.context.lookup(kids);
    // A document's own Document element gives its parts to the merged one (one Document under
    // the root, as PDF/UA has it), unless marked content hangs off it directly.
    const parts = (elements instanceof L.PDFArray ? elements.asArray() : [kids]).flatMap((element) => {
      const dict = source.context.lookup(element);
      const inner = dict instanceof L.PDFDict ? dict.get(L.PDFName.of('K')) : undefined;
      const innerParts = inner === undefined ? undefined : source.context.lookup(inner);
      const list = innerParts instanceof L.PDFArray ? innerParts.asArray() : inner === undefined ? [] : [inner];
      const lift =
        dict instanceof L.PDFDict &&
        dict.get(L.PDFName.of('S')) === L.PDFName.of('Document') &&
        list.length > 0 &&
        list.every((part) => part instanceof L.PDFRef && source.context.lookup(part) instanceof L.PDFDict);
      return lift ? list : [element];
    });
    // The parts lose their parent before the copy, so the source's root is not copied with them.
    for (const part of parts) {
      const dict = source.context.lookup(part);
      if (dict instanceof L.PDFDict) dict.delete(L.PDFName.of('P'));
    }
    for (const part of parts) {
      const copy = copier.copy(part);
      const dict = this.#pdf.context.lookup(copy);
      if (dict instanceof L.PDFDict) dict.set(L.PDFName.of('P'), this.#document);
      this.#kids.push(copy);
    }
    let last = -1;
    for (const [key, value] of numberTree(source, root.get(L.PDFName.of('ParentTree')))) {
      this.#nums.push(L.PDFNumber.of(key + keyOffset), copier.copy(value));
      last = Math.max(last, key);
    }
    const next = root.lookupMaybe(L.PDFName.of('ParentTreeNextKey'), L.PDFNumber)?.asNumber() ?? last + 1;
    this.nextKey = keyOffset + Math.max(next, last + 1);
  }

  finish(): void {
    if (this.#kids.length === 0) return;
    const { context, catalog } = this.#pdf;
    context.assign(this.#document, context.obj({ Type: 'StructElem', S: 'Document', P: this.#root, K: this.#kids }));
    context.assign(
      this.#root,
      context.obj({
        Type: 'StructTreeRoot',
        K: this.#document,
        ParentTree: context.obj({ Nums: this.#nums }),
        ParentTreeNextKey: this.nextKey,
      }),
    );
    catalog.set(L.PDFName.of('StructTreeRoot'), this.#root);
    catalog.set(L.PDFName.of('MarkInfo'), context.obj({ Marked: L.PDFBool.True }));
  }
}

// A number tree's entries, its kids' in order, as [key, value].
function numberTree(pdf: PdfLib.PDFDocument, node: PdfLib.PDFObject | undefined): [number, PdfLib.PDFObject][] {
  const dict = node === undefined ? undefined : pdf.context.lookup(node);
  if (!(dict instanceof L.PDFDict)) return [];
  const entries: [number, PdfLib.PDFObject][] = [];
  const nums = dict.lookupMaybe(L.PDFName.of('Nums'), L.PDFArray);
  if (nums) {
    for (let index = 0; index + 1 < nums.size(); index += 2) {
      const key = nums.get(index);
      if (key instanceof L.PDFNumber) entries.push([key.asNumber(), nums.get(index + 1)]);
    }
  }
  const kids = dict.lookupMaybe(L.PDFName.of('Kids'), L.PDFArray);
  for (const kid of kids?.asArray() ?? []) entries.push(...numberTree(pdf, kid));
  return entries;
}
