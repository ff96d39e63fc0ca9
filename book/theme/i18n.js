// The book's editions: a link in the menu bar to the same page in the other language, and, in
// the Japanese edition, a search that finds words written without spaces. The Japanese edition
// is built into ja/ beside the English one (see "Translations" in xtask/AUTHORING.md).
(function () {
  "use strict";

  const lang = document.documentElement.lang || "en";
  const japanese = lang === "ja";

  // The same page in the other edition: English pages sit at the book's root, Japanese ones in ja/.
  function otherEdition() {
    const root = new URL(typeof path_to_root === "string" && path_to_root ? path_to_root : "./", location.href);
    const here = location.href.split("#")[0].split("?")[0];
    const page = here.startsWith(root.href) ? here.slice(root.href.length) : "";
    const target = japanese ? new URL("../", root) : new URL("ja/", root);
    return target.href + page + location.hash;
  }

  const buttons = document.querySelector(".right-buttons");
  if (buttons) {
    const link = document.createElement("a");
    link.id = "language-switch";
    link.href = otherEdition();
    link.lang = japanese ? "en" : "ja";
    link.hreflang = link.lang;
    link.textContent = japanese ? "English" : "日本語";
    link.title = japanese ? "Read this page in English" : "このページを日本語で読む";
    link.setAttribute("aria-label", link.title);
    buttons.prepend(link);
  }

  if (!japanese) return;

  // The same cut as the index's (xtask/src/commands/book_i18n.rs, search_tokens): Latin words
  // whole and in lower case, runs of Japanese script as overlapping pairs of characters.
  const isJapanese = (c) => /[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]/.test(c);
  const isWord = (c) => /[\p{L}\p{N}_]/u.test(c);
  function searchTokens(text) {
    const tokens = [];
    let word = "";
    let run = [];
    const flushRun = () => {
      if (run.length === 1) tokens.push(run[0]);
      for (let i = 0; i + 1 < run.length; i++) tokens.push(run[i] + run[i + 1]);
      run = [];
    };
    const flushWord = () => {
      if (word) tokens.push(word);
      word = "";
    };
    for (const c of String(text ?? "").toLowerCase()) {
      if (isJapanese(c)) {
        flushWord();
        run.push(c);
      } else if (isWord(c)) {
        flushRun();
        word += c;
      } else {
        flushRun();
        flushWord();
      }
    }
    flushRun();
    flushWord();
    return tokens;
  }
  window.workbookSearchTokens = searchTokens;

  function useJapaneseTokens() {
    if (typeof elasticlunr === "undefined") return false;
    elasticlunr.tokenizer = function (text) {
      if (Array.isArray(text)) return text.flatMap(searchTokens);
      return searchTokens(text);
    };
    return true;
  }
  if (!useJapaneseTokens()) window.addEventListener("DOMContentLoaded", useJapaneseTokens);

  const bar = document.getElementById("mdbook-searchbar");
  if (bar) bar.placeholder = "この本を検索…";
})();
