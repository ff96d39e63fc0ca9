// The book, tested the way a reader uses it: in headless Chromium. Every page loads without a
// console error, every image and figure renders with a real size (and each edition shows its own
// drawing of a figure), every internal link and anchor resolves, the search box finds the words
// readers search for, and print.html renders.
//
// Usage: node browser.mjs <built book folder>   (`cargo xtask book --test` runs it)

import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { Tally, launch } from "./chromium.mjs";

const root = path.resolve(process.argv[2] ?? "../build");
// Each edition's search: a term, the page it starts from, and a page a result must lead to.
const searchTerms = [
  ["jitter", "index.html", null],
  ["Retry-After", "index.html", null],
  ["指数バックオフ", "ja/index.html", /ch07-exponential-backoff/],
  ["ジッター", "ja/index.html", /ch08-full-jitter/],
];

const contentTypes = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".json": "application/json",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".txt": "text/plain",
};

/** The file a URL path names inside the book, or null if it is outside or missing. */
function fileFor(urlPath) {
  let relative = decodeURIComponent(urlPath.split("?")[0]);
  if (relative.endsWith("/")) relative += "index.html";
  const file = path.join(root, relative);
  if (!file.startsWith(root) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) return null;
  return file;
}

function serve() {
  const server = http.createServer((request, response) => {
    const file = fileFor(new URL(request.url, "http://localhost").pathname);
    if (!file) {
      response.writeHead(404).end("not found");
      return;
    }
    const type = contentTypes[path.extname(file)] ?? "application/octet-stream";
    response.writeHead(200, { "content-type": type }).end(fs.readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function htmlPages(dir, prefix = "") {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix + entry.name;
    if (entry.isDirectory()) return htmlPages(path.join(dir, entry.name), relative + "/");
    return entry.name.endsWith(".html") ? [relative] : [];
  });
}

const idCache = new Map();
/** The ids defined in a built page. */
function idsOf(file) {
  if (!idCache.has(file)) {
    const html = fs.readFileSync(file, "utf8");
    idCache.set(file, new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1])));
  }
  return idCache.get(file);
}

const tally = new Tally("browser");
const expect = (condition, what) => tally.expect(condition, what);

const server = await serve();
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launch();

try {
  const pages = htmlPages(root).filter((page) => path.basename(page) !== "toc.html");
  for (const name of pages) {
    const page = await browser.newPage();
    const errors = [];
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("requestfailed", (request) => errors.push(`request failed: ${request.url()}`));
    const response = await page.goto(base + name, { waitUntil: "load" });
    expect(response?.status() === 200, `${name}: answers 200 (got ${response?.status()})`);

    const images = await page.$$eval("main img", (all) =>
      all.map((img) => ({ src: img.getAttribute("src"), width: img.naturalWidth, height: img.naturalHeight })),
    );
    for (const image of images) {
      expect(image.width > 0 && image.height > 0, `${name}: image ${image.src} renders (${image.width}×${image.height})`);
    }
    // A Japanese page shows the figure drawn with Japanese words wherever there is one
    // (figures/ja/X.svg); an English page never does.
    const japanesePage = name.startsWith("ja/");
    for (const image of images) {
      const figure = /^figures\/(?:ja\/)?([a-z0-9-]+\.svg)$/.exec(image.src ?? "");
      if (!figure) continue;
      const own = japanesePage && fs.existsSync(path.join(root, "ja/figures/ja", figure[1]));
      const wanted = own ? `figures/ja/${figure[1]}` : `figures/${figure[1]}`;
      expect(image.src === wanted, `${name}: figure ${figure[1]} is the ${own ? "Japanese" : "English"} one (${image.src})`);
    }
    const figures = await page.$$eval("main svg", (all) =>
      all.map((svg) => {
        const box = svg.getBoundingClientRect();
        return { width: box.width, height: box.height };
      }),
    );
    for (const [index, figure] of figures.entries()) {
      expect(figure.width > 0 && figure.height > 0, `${name}: inline SVG ${index} has a size`);
    }

    const links = await page.$$eval("a[href]", (all) => all.map((a) => a.getAttribute("href")));
    for (const href of links) {
      if (/^[a-z]+:/i.test(href) || href.startsWith("//")) continue;
      const target = new URL(href, base + name);
      const file = fileFor(target.pathname);
      expect(file !== null, `${name}: link ${href} leads to a page of the book`);
      if (file && target.hash.length > 1 && file.endsWith(".html")) {
        const anchor = decodeURIComponent(target.hash.slice(1));
        expect(idsOf(file).has(anchor), `${name}: link ${href} leads to an existing anchor`);
      }
    }
    expect(errors.length === 0, `${name}: no console errors (${errors.join(" | ")})`);
    await page.close();
  }

  for (const [term, start, leadsTo] of searchTerms) {
    if (!fs.existsSync(path.join(root, start))) continue;
    const page = await browser.newPage();
    await page.goto(base + start, { waitUntil: "load" });
    await page.click("#mdbook-search-toggle");
    // The search listens for key presses, so type the term as a reader would.
    await page.focus("#mdbook-searchbar");
    await page.keyboard.type(term, { delay: 20 });
    // Characters off a US keyboard arrive as text without key events (as from an input method);
    // a reader's input method ends with a key press, which starts the search.
    await page.keyboard.press("End");
    const found = await page
      .waitForFunction(() => document.querySelectorAll("#mdbook-searchresults li").length > 0, null, { timeout: 5000 })
      .then(() => page.$$eval("#mdbook-searchresults li", (items) => items.length))
      .catch(() => 0);
    expect(found > 0, `${start}: search finds "${term}" (${found} results)`);
    if (leadsTo) {
      const targets = await page.$$eval("#mdbook-searchresults li a", (all) => all.map((a) => a.getAttribute("href")));
      expect(targets.some((href) => leadsTo.test(href)), `${start}: a result for "${term}" leads to ${leadsTo} (${targets.slice(0, 5).join(", ")})`);
    }
    await page.close();
  }

  // The language switch leads to the same page in the other edition, and back.
  if (fs.existsSync(path.join(root, "ja/ch08-full-jitter.html"))) {
    const page = await browser.newPage();
    await page.goto(base + "ch08-full-jitter.html#83-the-formula", { waitUntil: "load" });
    const toJapanese = await page.$eval("#language-switch", (a) => a.href).catch(() => "");
    expect(toJapanese === base + "ja/ch08-full-jitter.html#83-the-formula", `the language switch leads to the Japanese page (${toJapanese})`);
    await page.goto(toJapanese, { waitUntil: "load" });
    expect(await page.$("[id=\"83-the-formula\"]") !== null, "the Japanese page has the English section's anchor");
    const figure = await page.$eval("main img[src$='ch08-delay-distributions.svg']", (img) => img.src).catch(() => "");
    const drawing = figure ? await (await fetch(figure)).text() : "";
    const title = /<title[^>]*>([^<]*)<\/title>/.exec(drawing)?.[1] ?? "";
    expect(/[\u3040-\u30ff\u4e00-\u9fff]/.test(title), `the Japanese page's figure is drawn in Japanese (${figure}: ${title})`);
    const notice = await page.$(".translation-notice");
    const complete = /^complete = true/m.test(fs.readFileSync(path.join(root, "../book.toml"), "utf8"));
    expect(complete || notice !== null, "a Japanese page in progress says so");
    const toEnglish = await page.$eval("#language-switch", (a) => a.href).catch(() => "");
    expect(toEnglish === base + "ch08-full-jitter.html#83-the-formula", `the language switch leads back to English (${toEnglish})`);
    await page.close();
  }

  const print = await browser.newPage();
  const printErrors = [];
  print.on("pageerror", (error) => printErrors.push(error.message));
  await print.goto(base + "print.html", { waitUntil: "load" });
  const printed = await print.$eval("main", (main) => main.innerText.length);
  expect(printed > 10000 && printErrors.length === 0, `print.html renders the whole book (${printed} characters)`);
  await print.close();
} finally {
  await browser.close();
  server.close();
}

tally.finish();
