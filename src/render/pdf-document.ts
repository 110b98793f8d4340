// What pdf-lib does to a PDF's objects here: metadata, language and displayed title, a text
// watermark, and merging printed documents into one with one outline and one structure tree.
import { readFile } from 'node:fs/promises';
import {
  beginMarkedContent,
  degrees,
  endMarkedContent,
  grayscale,
  PDFArray,
  PDFBool,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFNumber,
  PDFObjectCopier,
  PDFPage,
  PDFPageLeaf,
  PDFRef,
  type PDFFont,
  type PDFObject,
} from 'pdf-lib';

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
export function titleOf(pdf: PDFDocument): string | undefined {
  return pdf.getTitle()?.trim() || undefined;
}

/** The PDF's language (the catalog's /Lang), if it has one. */
export function languageOf(pdf: PDFDocument): string | undefined {
  const lang = pdf.catalog.lookup(PDFName.of('Lang'));
  const text = lang && 'decodeText' in lang ? String((lang as { decodeText(): string }).decodeText()) : undefined;
  return text?.trim() || undefined;
}

/** Loads a PDF as pdf-lib edits it, its producer and dates kept as they are. */
export function loadPdf(bytes: Uint8Array): Promise<PDFDocument> {
  return PDFDocument.load(bytes, { updateMetadata: false });
}

/** Sets `facts` on `pdf`: each given field of the document information, the language when it has none. */
export function setFacts(pdf: PDFDocument, facts: DocumentFacts): void {
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
export async function stampWatermark(pdf: PDFDocument, watermark: Watermark): Promise<void> {
  watermarkFont ??= readFile(WATERMARK_FONT);
  const { default: fontkit } = await import('@pdf-lib/fontkit');
  pdf.registerFontkit(fontkit);
  const font = await pdf.embedFont(await watermarkFont, { subset: true });
  for (const page of pdf.getPages()) stampPage(page, font, watermark);
}

function stampPage(page: PDFPage, font: PDFFont, { text, opacity, layer, opaque }: Watermark): void {
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
  page.pushOperators(beginMarkedContent('Artifact'));
  page.drawText(text, {
    x,
    y,
    size,
    font,
    rotate: degrees((angle * 180) / Math.PI),
    ...(opaque ? { color: grayscale(1 - opacity) } : { color: grayscale(0), opacity }),
  });
  page.pushOperators(endMarkedContent());
  if (layer === 'under') {
    // pdf-lib appends the stamp as the last content stream (the page's own wrapped in q … Q): first, it is under.
    const contents = contentsOf(page);
    const added = contents.slice(before);
    const stamp = added.at(-1);
    if (stamp === undefined) return;
    page.node.set(PDFName.of('Contents'), page.doc.context.obj([stamp, ...contents.filter((ref) => ref !== stamp)]));
  }
}

// The page's content streams, as refs.
function contentsOf(page: PDFPage): PDFObject[] {
  const contents = page.node.get(PDFName.of('Contents'));
  if (contents === undefined) return [];
  const array = page.doc.context.lookup(contents);
  return array instanceof PDFArray ? array.asArray() : [contents];
}

/**
 * The documents one after the other in one PDF: their pages, their outlines one after the other in
 * one outline, and, where they are tagged, their structure trees one after the other in one.
 * The title and the language are the first document's that has one.
 */
export async function mergePdfs(documents: Uint8Array[]): Promise<Uint8Array> {
  const merged = await PDFDocument.create({ updateMetadata: false });
  const outline = new MergedOutline(merged);
  const structure = new MergedStructure(merged);
  for (const bytes of documents) {
    const source = await loadPdf(bytes);
    const language = languageOf(source);
    if (language !== undefined && languageOf(merged) === undefined) merged.setLanguage(language);
    const title = titleOf(source);
    if (title !== undefined && titleOf(merged) === undefined) merged.setTitle(title);
    const copier = PDFObjectCopier.for(source.context, merged.context);
    const keyOffset = structure.nextKey;
    // Pages first: the outline's and the structure's references to them then find the copies.
    for (const page of source.getPages()) {
      const ref = copier.copy(page.ref);
      const leaf = merged.context.lookup(ref);
      if (!(leaf instanceof PDFPageLeaf)) throw new Error('a copied page is not a page');
      shiftStructParents(merged, leaf, keyOffset);
      merged.addPage(PDFPage.of(leaf, ref, merged));
    }
    outline.append(source, copier);
    structure.append(source, copier, keyOffset);
  }
  outline.finish();
  structure.finish();
  return merged.save();
}

// A page's and its annotations' keys into the structure's parent tree move past the documents before it.
function shiftStructParents(pdf: PDFDocument, leaf: PDFPageLeaf, offset: number): void {
  if (offset === 0) return;
  const shift = (dict: PDFDict, key: string) => {
    const value = dict.get(PDFName.of(key));
    if (value instanceof PDFNumber) dict.set(PDFName.of(key), PDFNumber.of(value.asNumber() + offset));
  };
  shift(leaf, 'StructParents');
  const annotations = leaf.lookup(PDFName.of('Annots'));
  if (!(annotations instanceof PDFArray)) return;
  for (const annotation of annotations.asArray()) {
    const dict = pdf.context.lookup(annotation);
    if (dict instanceof PDFDict) shift(dict, 'StructParent');
  }
}

/** The outlines of the documents merged, one after the other at the top level. */
class MergedOutline {
  readonly #pdf: PDFDocument;
  readonly #items: PDFRef[] = [];
  #count = 0;

  constructor(pdf: PDFDocument) {
    this.#pdf = pdf;
  }

  append(source: PDFDocument, copier: PDFObjectCopier): void {
    const outlines = source.catalog.lookupMaybe(PDFName.of('Outlines'), PDFDict);
    const first = outlines?.get(PDFName.of('First'));
    if (!outlines || !(first instanceof PDFRef)) return;
    // The top-level items lose their parent before the copy, so the source's outline root is not copied with them.
    const top: PDFRef[] = [];
    for (let item: PDFObject | undefined = first; item instanceof PDFRef; ) {
      const dict: PDFDict = source.context.lookup(item, PDFDict);
      dict.delete(PDFName.of('Parent'));
      top.push(item);
      item = dict.get(PDFName.of('Next'));
    }
    for (const item of top) this.#items.push(copier.copy(item));
    const count = outlines.lookupMaybe(PDFName.of('Count'), PDFNumber)?.asNumber() ?? top.length;
    this.#count += Math.abs(count);
  }

  finish(): void {
    if (this.#items.length === 0) return;
    const { context } = this.#pdf;
    const root = context.nextRef();
    this.#items.forEach((ref, index) => {
      const item = context.lookup(ref, PDFDict);
      item.set(PDFName.of('Parent'), root);
      const prev = this.#items[index - 1];
      const next = this.#items[index + 1];
      if (prev) item.set(PDFName.of('Prev'), prev);
      else item.delete(PDFName.of('Prev'));
      if (next) item.set(PDFName.of('Next'), next);
      else item.delete(PDFName.of('Next'));
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
    this.#pdf.catalog.set(PDFName.of('Outlines'), root);
  }
}

/** The structure trees of the tagged documents merged, their parts one after the other in one Document element. */
class MergedStructure {
  readonly #pdf: PDFDocument;
  readonly #kids: PDFObject[] = [];
  readonly #nums: PDFObject[] = [];
  readonly #root: PDFRef;
  readonly #document: PDFRef;
  nextKey = 0;

  constructor(pdf: PDFDocument) {
    this.#pdf = pdf;
    this.#root = pdf.context.nextRef();
    this.#document = pdf.context.nextRef();
  }

  append(source: PDFDocument, copier: PDFObjectCopier, keyOffset: number): void {
    const root = source.catalog.lookupMaybe(PDFName.of('StructTreeRoot'), PDFDict);
    const kids = root?.get(PDFName.of('K'));
    if (!root || kids === undefined) return;
    const elements = source.context.lookup(kids);
    // A document's own Document element gives its parts to the merged one (one Document under
    // the root, as PDF/UA has it), unless marked content hangs off it directly.
    const parts = (elements instanceof PDFArray ? elements.asArray() : [kids]).flatMap((element) => {
      const dict = source.context.lookup(element);
      const inner = dict instanceof PDFDict ? dict.get(PDFName.of('K')) : undefined;
      const innerParts = inner === undefined ? undefined : source.context.lookup(inner);
      const list = innerParts instanceof PDFArray ? innerParts.asArray() : inner === undefined ? [] : [inner];
      const lift =
        dict instanceof PDFDict &&
        dict.get(PDFName.of('S')) === PDFName.of('Document') &&
        list.length > 0 &&
        list.every((part) => part instanceof PDFRef && source.context.lookup(part) instanceof PDFDict);
      return lift ? list : [element];
    });
    // The parts lose their parent before the copy, so the source's root is not copied with them.
    for (const part of parts) {
      const dict = source.context.lookup(part);
      if (dict instanceof PDFDict) dict.delete(PDFName.of('P'));
    }
    for (const part of parts) {
      const copy = copier.copy(part);
      const dict = this.#pdf.context.lookup(copy);
      if (dict instanceof PDFDict) dict.set(PDFName.of('P'), this.#document);
      this.#kids.push(copy);
    }
    let last = -1;
    for (const [key, value] of numberTree(source, root.get(PDFName.of('ParentTree')))) {
      this.#nums.push(PDFNumber.of(key + keyOffset), copier.copy(value));
      last = Math.max(last, key);
    }
    const next = root.lookupMaybe(PDFName.of('ParentTreeNextKey'), PDFNumber)?.asNumber() ?? last + 1;
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
    catalog.set(PDFName.of('StructTreeRoot'), this.#root);
    catalog.set(PDFName.of('MarkInfo'), context.obj({ Marked: PDFBool.True }));
  }
}

// A number tree's entries, its kids' in order, as [key, value].
function numberTree(pdf: PDFDocument, node: PDFObject | undefined): [number, PDFObject][] {
  const dict = node === undefined ? undefined : pdf.context.lookup(node);
  if (!(dict instanceof PDFDict)) return [];
  const entries: [number, PDFObject][] = [];
  const nums = dict.lookupMaybe(PDFName.of('Nums'), PDFArray);
  if (nums) {
    for (let index = 0; index + 1 < nums.size(); index += 2) {
      const key = nums.get(index);
      if (key instanceof PDFNumber) entries.push([key.asNumber(), nums.get(index + 1)]);
    }
  }
  const kids = dict.lookupMaybe(PDFName.of('Kids'), PDFArray);
  for (const kid of kids?.asArray() ?? []) entries.push(...numberTree(pdf, kid));
  return entries;
}
