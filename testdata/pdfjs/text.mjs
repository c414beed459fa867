// text.mjs prints the text pdf.js (pdfjs-dist) extracts from a PDF, as a
// browser's viewer finds it: getTextContent per page, items joined, a
// newline where pdf.js says a line ends, pages ended by a form feed.
// Usage: node text.mjs FILE.pdf
import { readFileSync } from "node:fs";
import { getDocument } from "pdfjs-dist/legacy/build/pdf.mjs";

const data = new Uint8Array(readFileSync(process.argv[2]));
const doc = await getDocument({ data, verbosity: 0, isEvalSupported: false }).promise;
let out = "";
for (let i = 1; i <= doc.numPages; i++) {
  const page = await doc.getPage(i);
  const content = await page.getTextContent();
  for (const item of content.items) {
    out += item.str;
    if (item.hasEOL) out += "\n";
  }
  out += "\n\f";
}
process.stdout.write(out);
