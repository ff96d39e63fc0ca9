// The HTML class report of `cargo xtask grade-class`, tested in headless Chromium the way an
// instructor opens it: from disk, with no console error and no failed request (it is one
// self-contained file), the distribution of totals drawn, the chapters' statuses counted, the
// heat map present with a coloured share for every check and the most missed checks first
// (those of chapters nobody attempted last), every student's chapter showing its status, a
// partial chapter's failed checks folded until opened, and every book link leading to a page and
// anchor of the built book.
//
// Usage: node class-report.mjs <class-report.html> <built book folder> [students expected untrusted…]
// (xtask/tests/grade_class.rs runs it).

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";
import { Tally, launch } from "./chromium.mjs";

const [reportArg, bookArg, ...untrusted] = process.argv.slice(2);
const report = path.resolve(reportArg);
const book = path.resolve(bookArg);

const tally = new Tally("class report");
const expect = (condition, what) => tally.expect(condition, what);

const browser = await launch();
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("requestfailed", (request) => errors.push(`request failed: ${request.url()}`));
  const requests = [];
  page.on("request", (request) => requests.push(request.url()));
  await page.goto(pathToFileURL(report).href, { waitUntil: "load" });
  expect(errors.length === 0, `no console errors (${errors.join(" | ")})`);
  expect(requests.length === 1, `self-contained: one request, not ${requests.length} (${requests.join(", ")})`);

  const bars = await page.$$eval("#histogram rect.bar", (all) =>
    all.map((bar) => ({ count: Number(bar.dataset.count), height: bar.getBoundingClientRect().height })),
  );
  expect(bars.length === 10, `the histogram has 10 bars (${bars.length})`);
  expect(bars.some((bar) => bar.count > 0 && bar.height > 0), "some bar of the histogram is drawn");

  const chapters = await page.$$eval("#chapter-table tbody tr", (all) =>
    all.map((row) => [...row.querySelectorAll("td.count")].reduce((sum, cell) => sum + Number(cell.textContent), 0)),
  );
  expect(chapters.length > 0, `the chapters' statuses are counted (${chapters.length} chapters)`);
  expect(
    chapters.every((count) => count === chapters[0]),
    `every chapter counts every graded student (${chapters.join(", ")})`,
  );

  const rows = await page.$$eval("#heat-map tbody tr", (all) =>
    all.map((row) => {
      const cell = row.querySelector("td.share");
      return {
        share: row.dataset.share === undefined ? null : Number(row.dataset.share),
        colour: cell ? getComputedStyle(cell).backgroundColor : "",
        visible: cell ? cell.getBoundingClientRect().height > 0 : false,
      };
    }),
  );
  expect(rows.length > 0, `the heat map has rows (${rows.length})`);
  expect(
    rows.every((row) => row.visible && row.colour !== "" && row.colour !== "rgba(0, 0, 0, 0)"),
    "every check's share is a coloured cell",
  );
  expect(
    rows.every((row, i) => {
      const before = rows[i - 1];
      if (i === 0 || row.share === null) return true;
      return before.share !== null && before.share <= row.share;
    }),
    "the checks most missed come first, those nobody attempted last",
  );
  expect(new Set(rows.map((row) => row.colour)).size > 1, "the heat map has more than one colour");

  const statuses = await page.$$eval("#student-table td.points[data-status]", (all) =>
    all.map((cell) => ({ status: cell.dataset.status, text: cell.querySelector("small")?.textContent ?? "" })),
  );
  expect(statuses.length > 0, `students' chapters carry a status (${statuses.length})`);
  expect(
    statuses.every((cell) => cell.text.startsWith(cell.status.replaceAll("_", " "))),
    "every student's chapter shows its status in words",
  );
  const folded = await page.$("#student-table td.points details");
  if (folded !== null) {
    const item = await folded.$("li");
    expect(!(await item.isVisible()), "a partial chapter's failed checks are folded");
    await (await folded.$("summary")).click();
    expect(await item.isVisible(), "opening the fold shows the failed checks");
  }

  const links = await page.$$eval("a[href]", (all) => all.map((a) => a.href));
  expect(links.length > 0, `the report links to the book (${links.length} links)`);
  for (const href of links) {
    const url = new URL(href);
    expect(url.protocol === "file:", `${href} is a link into the built book`);
    const file = fileURLToPath(url);
    const exists = file.startsWith(book) && fs.existsSync(file);
    expect(exists, `${href} leads to a page of the book`);
    if (exists && url.hash.length > 1) {
      const html = fs.readFileSync(file, "utf8");
      const ids = new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1]));
      expect(ids.has(decodeURIComponent(url.hash.slice(1))), `${href} leads to an existing anchor`);
    }
  }

  const marked = await page.$$eval("tr.student[data-trusted='false']", (all) => all.map((row) => row.dataset.student));
  for (const student of untrusted) {
    expect(marked.includes(student), `${student} is marked untrusted`);
  }
  if (untrusted.length > 0) {
    expect((await page.$("#untrusted-warning")) !== null, "the page warns about untrusted results");
  }
} finally {
  await browser.close();
}

tally.finish();
