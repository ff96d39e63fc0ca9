//! A translated edition keeps the English book's code: every code block of a translated page is
//! the English block line for line, with only its comments in the other language. The PO file
//! holds pieces of code blocks (the extractor takes a YAML key or a word of a comment as a
//! message of its own), and one message can serve a table cell as well as a workflow's key: a
//! translation meant for the table would otherwise rewrite the workflow on the instructors' page.

use std::path::Path;

use anyhow::{Context, Result, bail};

/// Where the translated edition in `translated` departs from the English book in `english`
/// outside comments: one line per code block that differs, naming the page and both lines.
pub fn departures(english: &Path, translated: &Path) -> Result<Vec<String>> {
    if !english.join("index.html").is_file() {
        bail!(
            "{} holds no English book to compare the translation with: build it first",
            english.display()
        );
    }
    let mut found = Vec::new();
    let mut pages: Vec<_> = std::fs::read_dir(english)
        .with_context(|| format!("reading {}", english.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "html"))
        // The one-page print version repeats every chapter's blocks.
        .filter(|path| !path.ends_with("print.html"))
        .collect();
    pages.sort();
    for page in pages {
        let name = page
            .file_name()
            .expect("a file")
            .to_string_lossy()
            .into_owned();
        let Ok(translated_page) = std::fs::read_to_string(translated.join(&name)) else {
            continue;
        };
        let english_page = std::fs::read_to_string(&page)
            .with_context(|| format!("reading {}", page.display()))?;
        found.extend(page_departures(&name, &english_page, &translated_page));
    }
    Ok(found)
}

/// The departures of one page (see [`departures`]).
fn page_departures(name: &str, english: &str, translated: &str) -> Vec<String> {
    let (english, translated) = (code_blocks(english), code_blocks(translated));
    if english.len() != translated.len() {
        return vec![format!(
            "{name}: {} code blocks in English, {} in translation",
            english.len(),
            translated.len()
        )];
    }
    let mut found = Vec::new();
    for (block, ((language, english), (_, translated))) in
        english.iter().zip(&translated).enumerate()
    {
        let (english, translated) = (
            without_comments(english, language),
            without_comments(translated, language),
        );
        if english.len() != translated.len() {
            found.push(format!(
                "{name}, code block {}: {} lines in English, {} in translation",
                block + 1,
                english.len(),
                translated.len()
            ));
            continue;
        }
        if let Some((was, is)) = english.iter().zip(&translated).find(|(was, is)| was != is) {
            found.push(format!(
                "{name}, code block {}: `{was}` became `{is}`",
                block + 1
            ));
        }
    }
    found
}

/// Each `<pre><code>` block of an mdBook page: its language (from `language-…`) and its text,
/// entities undone.
fn code_blocks(page: &str) -> Vec<(String, String)> {
    let mut blocks = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find("<pre><code") {
        let after = &rest[start + "<pre><code".len()..];
        let Some(open_end) = after.find('>') else {
            break;
        };
        let Some(close) = after.find("</code></pre>") else {
            break;
        };
        let attributes = &after[..open_end];
        let language = attributes
            .split(['"', ' '])
            .find_map(|word| word.strip_prefix("language-"))
            .unwrap_or("")
            .to_owned();
        blocks.push((language, unescape(&after[open_end + 1..close])));
        rest = &after[close..];
    }
    blocks
}

/// The text of HTML with mdBook's five entities undone.
fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The lines of a block in `language` with their comments cut off (a block comment's words
/// included), trailing spaces trimmed. Program output (`text`, `console`) has no comments: it
/// must stay as printed.
fn without_comments(code: &str, language: &str) -> Vec<String> {
    // The line comment's marker, and whether `/* … */` comments exist too.
    let (line_comment, block_comments) = match language {
        "rust" | "js" | "javascript" => (Some("//"), true),
        "sql" => (Some("--"), true),
        "yaml" | "toml" | "sh" | "bash" | "shell" | "python" => (Some("#"), false),
        _ => (None, false),
    };
    code.lines()
        .map(|line| {
            let mut line = if block_comments {
                without_block_comments(line)
            } else {
                line.to_owned()
            };
            if let Some(at) = line_comment.and_then(|marker| line.find(marker)) {
                line.truncate(at);
            }
            line.trim_end().to_owned()
        })
        .collect()
}

/// A line with its `/* … */` comments (opened and closed on it) cut out.
fn without_block_comments(line: &str) -> String {
    let mut kept = String::new();
    let mut rest = line;
    while let Some(open) = rest.find("/*") {
        let Some(close) = rest[open..].find("*/") else {
            break;
        };
        kept.push_str(&rest[..open]);
        rest = &rest[open + close + 2..];
    }
    kept.push_str(rest);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(blocks: &[(&str, &str)]) -> String {
        blocks
            .iter()
            .map(|(language, code)| {
                format!("<p>x</p><pre><code class=\"language-{language} hljs\">{code}</code></pre>")
            })
            .collect()
    }

    #[test]
    fn translated_comments_are_the_only_change_a_block_may_have() {
        let english = page(&[
            (
                "rust",
                "let n = 3; // three tries\npub struct B { /* your fields */ }",
            ),
            ("sql", "SELECT 1; -- one row"),
            (
                "yaml",
                "jobs:\n  grade: # the class\n    run: cargo xtask grade",
            ),
        ]);
        let translated = page(&[
            (
                "rust",
                "let n = 3; // 3 回試す\npub struct B { /* あなたのフィールド */ }",
            ),
            ("sql", "SELECT 1; -- 1 行"),
            (
                "yaml",
                "jobs:\n  grade: # クラス\n    run: cargo xtask grade",
            ),
        ]);
        assert_eq!(
            page_departures("a.html", &english, &translated),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_translated_key_or_output_line_is_named() {
        let english = page(&[
            ("yaml", "steps:\n  - run: cargo test"),
            ("text", "attempt 1 failed"),
        ]);
        let translated = page(&[
            ("yaml", "steps:\n  - 実行: cargo test"),
            ("text", "試行 1 失敗"),
        ]);
        let found = page_departures("a.html", &english, &translated);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("`  - run: cargo test` became `  - 実行: cargo test`"));
        assert!(found[1].contains("code block 2"));
    }

    #[test]
    fn a_lost_block_is_named() {
        let english = page(&[("rust", "a"), ("rust", "b")]);
        let translated = page(&[("rust", "a")]);
        assert_eq!(
            page_departures("a.html", &english, &translated),
            ["a.html: 2 code blocks in English, 1 in translation"]
        );
    }
}
