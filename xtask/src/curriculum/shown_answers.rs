//! The rule that a page teaches without handing over the answer: no code block of a chapter's
//! rendered page (after mdBook's includes) may share a run of [`RUN_TOKENS`] tokens with the body
//! of a solution function the learner writes. Tokens are Rust's, with comments and whitespace
//! dropped, so reformatting or recommenting a pasted answer does not hide it.
//!
//! The functions the learner writes are those whose body in the exercise holds `todo!()` or
//! `unimplemented!()`, and those a file of the exercise lacks but the solution's same file has
//! (ch14's tests, private helpers). The rubric's given files are shipped as they are and never
//! count, and neither do files only the solution has (a tested worked example the page includes).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// How many tokens in a row make a shown answer: about a statement and a half, longer than any
/// call or signature a page must show to talk about the exercise.
pub const RUN_TOKENS: usize = 12;

/// Operators of more than one character, longest first: each is one token.
const OPERATORS: &[&str] = &[
    "..=", "...", "<<=", ">>=", "::", "->", "=>", "..", "==", "!=", "<=", ">=", "&&", "||", "+=",
    "-=", "*=", "/=", "%=", "^=", "&=", "|=", "<<", ">>",
];

/// A token of Rust source and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub text: String,
    pub line: usize,
    /// A word of a string literal (never a delimiter of the code around it).
    pub in_string: bool,
}

/// Rust tokens of `source`, comments and whitespace dropped (compare them case-blind). String and character literals are
/// one token each, so braces or `//` inside them change nothing. Not a full lexer: enough to
/// compare code, and it never fails.
pub fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start_line = line;
        let start = i;
        if c == '\n' {
            line += 1;
            i += 1;
            continue;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c == '/' && chars.get(i + 1) == Some(&'*') {
            let end = block_comment_end(&chars, i);
            line += chars[i..end].iter().filter(|&&c| c == '\n').count();
            i = end;
            continue;
        }
        if let Some((content, end)) = string_literal(&chars, i) {
            // A string's words are code too (an SQL statement, a message): compared word by
            // word, so a `sql` block that shows the statement matches the string that holds it.
            line += chars[i..end].iter().filter(|&&c| c == '\n').count();
            out.extend(words(&content, start_line));
            i = end;
            continue;
        } else if c == '\'' {
            i = char_literal_end(&chars, i).unwrap_or(i + 1);
        } else if c.is_alphanumeric() || c == '_' {
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else {
            let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
            i += OPERATORS
                .iter()
                .find(|op| rest.starts_with(*op))
                .map_or(1, |op| op.len());
        }
        out.push(Token {
            text: chars[start..i].iter().collect(),
            line: start_line,
            in_string: false,
        });
    }
    out
}

/// Where the block comment opening at `i` ends (block comments nest).
pub fn block_comment_end(chars: &[char], mut i: usize) -> usize {
    let mut depth = 0;
    while i < chars.len() {
        if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
            depth += 1;
            i += 2;
        } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return i;
            }
        } else {
            i += 1;
        }
    }
    chars.len()
}

/// The text of a string literal at `i` (`"…"`, `b"…"`, `r#"…"#`), its escapes resolved, and
/// where the literal ends; `None` when no string starts there.
pub fn string_literal(chars: &[char], i: usize) -> Option<(String, usize)> {
    if let Some(end) = raw_string_end(chars, i) {
        let open = i + chars[i..].iter().position(|&c| c == '"')? + 1;
        let hashes = open - 1 - i - usize::from(chars[i] == 'b') - 1;
        let close = end.saturating_sub(1 + hashes).max(open);
        return Some((chars[open..close].iter().collect(), end));
    }
    let open = match (chars.get(i), chars.get(i + 1)) {
        (Some('"'), _) => i + 1,
        (Some('b'), Some('"')) if i == 0 || !is_ident(chars[i - 1]) => i + 2,
        _ => return None,
    };
    let mut text = String::new();
    let mut j = open;
    while j < chars.len() && chars[j] != '"' {
        if chars[j] == '\\' {
            j += 1;
            match chars.get(j) {
                Some('n' | 't' | 'r') | Some('\n') => text.push(' '),
                Some(&escaped) => text.push(escaped),
                None => {}
            }
        } else {
            text.push(chars[j]);
        }
        j += 1;
    }
    Some((text, (j + 1).min(chars.len())))
}

/// The words, numbers and punctuation of a string's text, as tokens.
fn words(text: &str, line: usize) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let start = i;
        if chars[i].is_whitespace() {
            i += 1;
            continue;
        }
        if is_ident(chars[i]) {
            while i < chars.len() && is_ident(chars[i]) {
                i += 1;
            }
        } else {
            i += 1;
        }
        out.push(Token {
            text: chars[start..i].iter().collect(),
            line,
            in_string: true,
        });
    }
    out
}

/// The end of a raw string literal (`r"…"`, `r#"…"#`, `br#"…"#`) starting at `i`, if one does.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if chars.get(j) == Some(&'b') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') || (j > 0 && i > 0 && is_ident(chars[i - 1])) {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// The end of a character literal at `i` (`'a'`, `'\n'`, `'\u{1F600}'`); `None` for a lifetime.
pub fn char_literal_end(chars: &[char], i: usize) -> Option<usize> {
    if chars.get(i + 1) == Some(&'\\') {
        let close = chars[i + 2..].iter().position(|&c| c == '\'')?;
        return Some(i + 2 + close + 1);
    }
    (chars.get(i + 2) == Some(&'\'')).then_some(i + 3)
}

/// A character of a Rust identifier or number.
pub fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// One function of a source file: its name and the tokens between its body's braces.
#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub body: Vec<Token>,
}

/// Every function with a body in `tokens`, nested ones included, in source order.
pub fn functions(tokens: &[Token]) -> Vec<Function> {
    let mut found = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        if token.text != "fn" || token.in_string {
            continue;
        }
        let Some(name) = tokens.get(i + 1).filter(|t| t.text.starts_with(is_ident)) else {
            continue;
        };
        let Some(open) = tokens[i + 2..]
            .iter()
            .position(|t| !t.in_string && (t.text == "{" || t.text == ";"))
            .map(|p| i + 2 + p)
            .filter(|&p| tokens[p].text == "{")
        else {
            continue;
        };
        let mut depth = 0;
        let close = tokens[open..].iter().position(|t| {
            match t.text.as_str() {
                _ if t.in_string => {}
                "{" => depth += 1,
                "}" => depth -= 1,
                _ => {}
            }
            depth == 0
        });
        let close = close.map_or(tokens.len(), |p| open + p);
        found.push(Function {
            name: name.text.clone(),
            body: tokens[open + 1..close].to_vec(),
        });
    }
    found
}

fn asks_for_code(function: &Function) -> bool {
    function.body.windows(2).any(|pair| {
        !pair[0].in_string
            && (pair[0].text == "todo" || pair[0].text == "unimplemented")
            && pair[1].text == "!"
    })
}

/// A solution function the learner writes.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The solution file, as the message shows it.
    pub file: String,
    pub name: String,
    pub body: Vec<Token>,
}

/// The solution functions the learner writes long enough to recognise on a page, from the
/// exercise's and the solution's sources (relative path → text); files listed in `given` are
/// shipped as they are and are skipped.
pub fn answers(
    exercise: &BTreeMap<String, String>,
    solution: &BTreeMap<String, String>,
    given: &[String],
    solution_label: &str,
) -> Vec<Answer> {
    learner_functions(exercise, solution, given)
        .into_iter()
        .filter(|(_, function)| function.body.len() >= RUN_TOKENS)
        .map(|(file, function)| Answer {
            file: format!("{solution_label}/{file}"),
            name: function.name,
            body: function.body,
        })
        .collect()
}

/// Every solution function the learner writes, with the solution file that holds it: those
/// whose exercise counterpart asks for code, and those the exercise does not have.
pub fn learner_functions(
    exercise: &BTreeMap<String, String>,
    solution: &BTreeMap<String, String>,
    given: &[String],
) -> Vec<(String, Function)> {
    let mut out = Vec::new();
    for (file, text) in solution {
        let Some(shipped) = exercise.get(file).filter(|_| !given.contains(file)) else {
            continue;
        };
        let shipped = functions(&tokens(shipped));
        // The k-th function of a name in the solution meets the k-th of that name in the
        // exercise (two impls may each have a `new`).
        let mut seen: HashMap<String, usize> = HashMap::new();
        for function in functions(&tokens(text)) {
            let occurrence = seen.entry(function.name.clone()).or_default();
            let counterpart = shipped
                .iter()
                .filter(|f| f.name == function.name)
                .nth(*occurrence);
            *occurrence += 1;
            if counterpart.is_none_or(asks_for_code) {
                out.push((file.clone(), function));
            }
        }
    }
    out
}

/// A fenced code block of a rendered page.
#[derive(Debug, Clone)]
pub struct CodeBlock {
    /// 1 for the page's first code block.
    pub number: usize,
    /// The line of the page's source where the block opens.
    pub line: usize,
    /// The include directives whose text the block shows.
    pub includes: Vec<String>,
    pub text: String,
}

/// The page at `page` as mdBook renders it: every `{{#include …}}` and `{{#rustdoc_include …}}`
/// replaced by what it names (a whole file, an anchor, or a line range), each line with the
/// page line it came from and the directive that brought it.
pub fn expand_includes(page: &Path) -> Result<Vec<(String, usize, Option<String>)>> {
    let text =
        std::fs::read_to_string(page).with_context(|| format!("reading {}", page.display()))?;
    let dir = page.parent().unwrap_or(Path::new("."));
    let mut lines = Vec::new();
    for (index, line) in text.lines().enumerate() {
        expand_line(line, dir, index + 1, None, 0, &mut lines)?;
    }
    Ok(lines)
}

fn expand_line(
    line: &str,
    dir: &Path,
    page_line: usize,
    via: Option<&str>,
    depth: usize,
    out: &mut Vec<(String, usize, Option<String>)>,
) -> Result<()> {
    let Some((before, directive, after)) = find_include(line).filter(|_| depth < 10) else {
        out.push((line.to_owned(), page_line, via.map(str::to_owned)));
        return Ok(());
    };
    let (path, selection) = split_include(&directive);
    let file = dir.join(path);
    let included = std::fs::read_to_string(&file)
        .with_context(|| format!("reading {} (included as {directive})", file.display()))?;
    let selected = select(&included, selection);
    let nested_dir = file
        .parent()
        .map_or_else(|| dir.to_path_buf(), PathBuf::from);
    let nested_via = via.unwrap_or(&directive).to_owned();
    // The included text resolves its own includes from its folder; the rest of this line, which
    // may hold another include, still resolves from this one.
    let mut expanded = Vec::new();
    for piece in selected.lines() {
        expand_line(
            piece,
            &nested_dir,
            page_line,
            Some(&nested_via),
            depth + 1,
            &mut expanded,
        )?;
    }
    let mut rest = Vec::new();
    expand_line(&after, dir, page_line, via, depth + 1, &mut rest)?;
    if expanded.is_empty() {
        expanded.push((String::new(), page_line, Some(nested_via)));
    }
    expanded[0].0.insert_str(0, &before);
    let mut rest = rest.into_iter();
    if let (Some(last), Some((tail, _, _))) = (expanded.last_mut(), rest.next()) {
        last.0.push_str(&tail);
    }
    out.extend(expanded);
    out.extend(rest);
    Ok(())
}

/// `(text before, the directive, text after)` for the first include on a line.
fn find_include(line: &str) -> Option<(String, String, String)> {
    for keyword in ["{{#include ", "{{#rustdoc_include "] {
        if let Some(start) = line.find(keyword) {
            if line[..start].ends_with('\\') {
                continue;
            }
            let end = start + line[start..].find("}}")? + 2;
            return Some((
                line[..start].to_owned(),
                line[start..end].to_owned(),
                line[end..].to_owned(),
            ));
        }
    }
    None
}

/// The path and the selection (`anchor`, `10:20`, `10:`, `:20`, or nothing) of a directive.
fn split_include(directive: &str) -> (&str, Option<&str>) {
    let inner = directive
        .trim_start_matches("{{#rustdoc_include ")
        .trim_start_matches("{{#include ")
        .trim_end_matches("}}")
        .trim();
    // rustdoc_include shows the whole file (the rest hidden behind `#`), which the page holds.
    if directive.starts_with("{{#rustdoc_include") {
        return (inner.split(':').next().unwrap_or(inner), None);
    }
    match inner.split_once(':') {
        Some((path, selection)) => (path, Some(selection)),
        None => (inner, None),
    }
}

fn select(text: &str, selection: Option<&str>) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let Some(selection) = selection else {
        return without_anchor_lines(&lines);
    };
    let number = |s: &str| s.trim().parse::<usize>().ok();
    if let Some((start, end)) = selection.split_once(':') {
        let first = number(start).unwrap_or(1).max(1) - 1;
        let last = number(end).unwrap_or(lines.len()).min(lines.len());
        return without_anchor_lines(lines.get(first..last).unwrap_or_default());
    }
    if let Some(line) = number(selection) {
        return without_anchor_lines(lines.get(line.max(1) - 1..).unwrap_or_default());
    }
    let mut inside = false;
    let mut kept = Vec::new();
    for line in &lines {
        if line.contains(&format!("ANCHOR: {selection}")) && ends_name(line, selection) {
            inside = true;
        } else if line.contains(&format!("ANCHOR_END: {selection}")) && ends_name(line, selection) {
            inside = false;
        } else if inside {
            kept.push(*line);
        }
    }
    without_anchor_lines(&kept)
}

/// True when `name` in `line` is a whole anchor name (`ANCHOR: a` must not match `ANCHOR: ab`).
fn ends_name(line: &str, name: &str) -> bool {
    line.split_whitespace().any(|word| word == name)
}

fn without_anchor_lines(lines: &[&str]) -> String {
    lines
        .iter()
        .filter(|line| !line.contains("ANCHOR:") && !line.contains("ANCHOR_END:"))
        .copied()
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fenced code blocks of an expanded page.
pub fn code_blocks(lines: &[(String, usize, Option<String>)]) -> Vec<CodeBlock> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, CodeBlock)> = None;
    for (line, page_line, via) in lines {
        let trimmed = line.trim_start();
        let fence: String = trimmed
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        let is_fence =
            fence.len() >= 3 && fence.chars().all(|c| c == fence.chars().next().unwrap());
        match &mut open {
            None if is_fence => {
                open = Some((
                    fence,
                    CodeBlock {
                        number: blocks.len() + 1,
                        line: *page_line,
                        includes: Vec::new(),
                        text: String::new(),
                    },
                ));
            }
            None => {}
            Some((opening, _))
                if is_fence
                    && fence.starts_with(opening.as_str())
                    && trimmed[fence.len()..].trim().is_empty() =>
            {
                blocks.push(open.take().expect("a block is open").1);
            }
            Some((_, block)) => {
                // rustdoc's hidden lines (`# use …`) are in the page too, behind a toggle.
                let code = match trimmed.strip_prefix('#') {
                    Some(rest) if rest.is_empty() || rest.starts_with(' ') => rest,
                    _ => line.as_str(),
                };
                block.text.push_str(code);
                block.text.push('\n');
                if let Some(via) = via
                    && !block.includes.contains(via)
                {
                    block.includes.push(via.clone());
                }
            }
        }
    }
    blocks
}

/// A code block that shows part of an answer.
#[derive(Debug, Clone)]
pub struct Shown {
    pub block: CodeBlock,
    pub answer: String,
    pub answer_file: String,
    /// The longest run of tokens the block shares with the answer's body.
    pub run: usize,
    /// The shared run, as tokens joined by spaces (cut short for the message).
    pub excerpt: String,
}

/// Every (code block, answer) pair that shares a run of at least [`RUN_TOKENS`] tokens.
pub fn shown_answers(blocks: &[CodeBlock], answers: &[Answer]) -> Vec<Shown> {
    // Compared case-blind (SQL keywords, say), shown as written.
    let key = |tokens: &[Token]| {
        tokens
            .iter()
            .map(|t| t.text.to_lowercase())
            .collect::<Vec<_>>()
            .join("\u{1}")
    };
    let mut runs: HashMap<String, Vec<usize>> = HashMap::new();
    for (index, answer) in answers.iter().enumerate() {
        for window in answer.body.windows(RUN_TOKENS) {
            let owners = runs.entry(key(window)).or_default();
            if owners.last() != Some(&index) {
                owners.push(index);
            }
        }
    }
    let mut found = Vec::new();
    for block in blocks {
        let code = tokens(&block.text);
        // For each answer: the longest run of consecutive shared windows, and where it starts.
        let mut best: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        let mut current: HashMap<usize, (usize, usize)> = HashMap::new();
        for (start, window) in code.windows(RUN_TOKENS).enumerate() {
            let owners = runs.get(&key(window)).cloned().unwrap_or_default();
            current.retain(|answer, _| owners.contains(answer));
            for answer in owners {
                let run = current.entry(answer).or_insert((start, 0));
                run.1 += 1;
                let longest = best.entry(answer).or_insert(*run);
                if run.1 > longest.1 {
                    *longest = *run;
                }
            }
        }
        for (answer, (start, windows)) in best {
            let length = windows + RUN_TOKENS - 1;
            let mut excerpt = code[start..start + length]
                .iter()
                .take(24)
                .map(|t| short(&t.text))
                .collect::<Vec<_>>()
                .join(" ");
            if length > 24 {
                excerpt.push_str(" …");
            }
            found.push(Shown {
                block: block.clone(),
                answer: answers[answer].name.clone(),
                answer_file: answers[answer].file.clone(),
                run: length,
                excerpt,
            });
        }
    }
    found
}

/// A token for a one-line message: whitespace collapsed, long literals cut.
fn short(token: &str) -> String {
    let flat = token.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 30 {
        format!("{}…", flat.chars().take(29).collect::<String>())
    } else {
        flat
    }
}

impl Shown {
    /// The finding, naming the page, the block and the function.
    pub fn message(&self, page: &str) -> String {
        let from = if self.block.includes.is_empty() {
            String::new()
        } else {
            format!(" (from {})", self.block.includes.join(", "))
        };
        format!(
            "{page}: code block {} (line {}){from} shows {} tokens in a row of `{}` in {}, which \
             the exercise asks the learner to write: `{}`. Teach with a neighbouring problem, and \
             leave the answer to `cargo xtask solution`",
            self.block.number,
            self.block.line,
            self.run,
            self.answer,
            self.answer_file,
            self.excerpt
        )
    }
}

/// The `.rs` files below `dir` (outside `target/`), relative path → text.
pub fn rust_sources(dir: &Path) -> Result<BTreeMap<String, String>> {
    let mut sources = BTreeMap::new();
    for file in crate::curriculum::shipped::crate_files(dir)? {
        if file.ends_with(".rs") {
            let path = dir.join(&file);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            sources.insert(file, text);
        }
    }
    Ok(sources)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXERCISE: &str = r#"
/// The delay before retry `attempt`.
pub fn full_jitter(attempt: u32, base_ms: u64, cap_ms: u64, rng: &mut impl rand::Rng) -> u64 {
    let _ = rng;
    todo!("full_jitter(attempt = {attempt})")
}

/// Given: the ceiling of an attempt.
pub fn ceiling(attempt: u32, base_ms: u64, cap_ms: u64) -> u64 {
    base_ms.saturating_mul(1u64 << attempt.min(63)).min(cap_ms)
}
"#;

    const WORKED_EXAMPLE: &str = r#"
/// A tested worked example on a neighbouring problem: the page may include it.
pub fn linear_delay(attempt: u32, step_ms: u64, cap_ms: u64) -> u64 {
    let delay = step_ms.saturating_mul(u64::from(attempt) + 1);
    if delay > cap_ms { return cap_ms; }
    delay
}
"#;

    const SOLUTION: &str = r#"
/// The delay before retry `attempt`.
pub fn full_jitter(attempt: u32, base_ms: u64, cap_ms: u64, rng: &mut impl rand::Rng) -> u64 {
    // ANCHOR: draw
    let top = ceiling(attempt, base_ms, cap_ms);
    if top == 0 { return 0; }
    rng.random_range(0..=top)
    // ANCHOR_END: draw
}

/// Given: the ceiling of an attempt.
pub fn ceiling(attempt: u32, base_ms: u64, cap_ms: u64) -> u64 {
    base_ms.saturating_mul(1u64 << attempt.min(63)).min(cap_ms)
}
"#;

    fn files(text: &str) -> BTreeMap<String, String> {
        BTreeMap::from([("src/lib.rs".to_owned(), text.to_owned())])
    }

    fn page_findings(page: &str) -> Vec<Shown> {
        let answers = answers(&files(EXERCISE), &files(SOLUTION), &[], "solutions/ch08");
        let lines: Vec<(String, usize, Option<String>)> = page
            .lines()
            .enumerate()
            .map(|(i, l)| (l.to_owned(), i + 1, None))
            .collect();
        shown_answers(&code_blocks(&lines), &answers)
    }

    #[test]
    fn strings_are_compared_word_by_word_and_case_blind() {
        let solution = "fn mark(&self, id: i64) -> Result<usize> {\n    self.conn.execute(\n        \"UPDATE outbox SET sent_at = ?2,\\n status = 'sent' WHERE id = ?1 AND status = 'pending'\",\n        params![id, now],\n    )\n}\n";
        let exercise = "fn mark(&self, id: i64) -> Result<usize> {\n    todo!()\n}\n";
        let answers = answers(&files(exercise), &files(solution), &[], "solutions/ch15");
        let page = "```sql\nupdate outbox set sent_at = ?2, status = 'sent'\n where id = ?1 and status = 'pending'\n```\n";
        let lines: Vec<(String, usize, Option<String>)> = page
            .lines()
            .enumerate()
            .map(|(i, l)| (l.to_owned(), i + 1, None))
            .collect();
        let found = shown_answers(&code_blocks(&lines), &answers);
        assert_eq!(found.len(), 1, "the statement on the page is the answer's");
        assert!(
            found[0].excerpt.starts_with("update outbox set"),
            "shown as the page writes it: {}",
            found[0].excerpt
        );
        let raw: Vec<String> = tokens("r#\"SELECT \"id\" FROM t\"#")
            .into_iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(raw, ["SELECT", "\"", "id", "\"", "FROM", "t"]);
    }

    #[test]
    fn tokens_drop_comments_but_not_what_strings_say() {
        let all = tokens("let s = \"a // b { \"; // gone\n/* also */ x.y('{', r#\"}\"#)");
        let texts: Vec<&str> = all.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "let", "s", "=", "a", "/", "/", "b", "{", ";", "x", ".", "y", "(", "'{'", ",", "}",
                ")"
            ]
        );
        let braces_in_strings = all
            .iter()
            .filter(|t| t.in_string && (t.text == "{" || t.text == "}"));
        assert_eq!(
            braces_in_strings.count(),
            2,
            "they never open or close a body"
        );
        let body = functions(&tokens(
            "fn f() { println!(\"{{ not a brace\"); g() } fn h() {}",
        ));
        assert_eq!(body.len(), 2);
        assert_eq!(body[0].body.last().unwrap().text, ")");
    }

    #[test]
    fn only_functions_with_a_todo_or_missing_from_the_exercise_are_answers() {
        let mut solution = files(SOLUTION);
        solution.insert(
            "src/worked_example.rs".to_owned(),
            WORKED_EXAMPLE.to_owned(),
        );
        solution.insert(
            "src/lib.rs".to_owned(),
            format!(
                "{SOLUTION}
fn helper(x: u64) -> u64 {{ let y = x * 2 + 1; let z = y * y - x; z / 3 + y }}
"
            ),
        );
        let found = answers(&files(EXERCISE), &solution, &[], "solutions/ch08");
        let names: Vec<&str> = found.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            ["full_jitter", "helper"],
            "ceiling is given and the worked example is the solution's own file: the page may show them"
        );
    }

    #[test]
    fn a_pasted_solution_is_rejected_even_reformatted_and_recommented() {
        let page = "# 8.3 The formula\n\nSome prose.\n\n```rust\n// the answer, pasted\nlet top =\n    ceiling(attempt, base_ms, cap_ms); // ceiling first\nif top == 0 {\n    return 0;\n}\nrng.random_range(0..=top)\n```\n";
        let found = page_findings(page);
        assert_eq!(found.len(), 1, "{found:?}");
        let message = found[0].message("book/src/ch08-full-jitter.md");
        assert!(message.contains("code block 1 (line 5)"), "{message}");
        assert!(message.contains("`full_jitter`"), "{message}");
        assert!(message.contains("solutions/ch08/src/lib.rs"), "{message}");
        assert!(found[0].run >= RUN_TOKENS, "{message}");
    }

    #[test]
    fn a_worked_example_on_a_neighbouring_problem_is_accepted() {
        // The same technique on another function (equal jitter), the given ceiling, and the
        // exercise's signature: none of it is the answer.
        let page = "```rust\npub fn equal_jitter(attempt: u32, base_ms: u64, cap_ms: u64, rng: &mut impl rand::Rng) -> u64 {\n    let half = ceiling(attempt, base_ms, cap_ms) / 2;\n    half + rng.random_range(0..=half)\n}\n```\n\n```rust\npub fn ceiling(attempt: u32, base_ms: u64, cap_ms: u64) -> u64 {\n    base_ms.saturating_mul(1u64 << attempt.min(63)).min(cap_ms)\n}\n```\n";
        assert!(page_findings(page).is_empty());
    }

    #[test]
    fn an_include_of_the_solution_is_rejected_and_named() {
        let dir = std::env::temp_dir().join(format!("shown-answers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("book/src")).unwrap();
        std::fs::create_dir_all(dir.join("solutions/ch08/src")).unwrap();
        std::fs::write(dir.join("solutions/ch08/src/lib.rs"), SOLUTION).unwrap();
        let page = dir.join("book/src/ch08.md");
        std::fs::write(
            &page,
            "Text.\n\n```rust\n{{#include ../../solutions/ch08/src/lib.rs:draw}}\n```\n",
        )
        .unwrap();
        let answers = answers(&files(EXERCISE), &files(SOLUTION), &[], "solutions/ch08");
        let found = shown_answers(&code_blocks(&expand_includes(&page).unwrap()), &answers);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(found.len(), 1);
        let message = found[0].message("book/src/ch08.md");
        assert!(
            message.contains("(from {{#include ../../solutions/ch08/src/lib.rs:draw}})"),
            "{message}"
        );
        assert!(message.contains("line 3"), "{message}");
    }

    #[test]
    fn two_includes_on_one_line_both_resolve_from_the_page() {
        let dir = std::env::temp_dir().join(format!("shown-answers-two-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("book/src/figures")).unwrap();
        std::fs::write(dir.join("book/src/figures/a.md"), "42").unwrap();
        std::fs::write(dir.join("book/src/figures/b.md"), "7").unwrap();
        let page = dir.join("book/src/ch10.md");
        std::fs::write(
            &page,
            "Between {{#include figures/a.md}} and {{#include figures/b.md}} calls.\n",
        )
        .unwrap();
        let expanded = expand_includes(&page);
        let _ = std::fs::remove_dir_all(&dir);
        let lines: Vec<String> = expanded
            .unwrap()
            .into_iter()
            .map(|(text, _, _)| text)
            .collect();
        assert_eq!(lines, vec!["Between 42 and 7 calls.".to_owned()]);
    }

    #[test]
    fn line_ranges_and_anchors_select_what_mdbook_selects() {
        let text = "a\n// ANCHOR: x\nb\n// ANCHOR_END: x\nc\n";
        assert_eq!(select(text, Some("x")), "b");
        assert_eq!(select(text, Some("1:3")), "a\nb");
        assert_eq!(select(text, Some("5")), "c");
        assert_eq!(select(text, Some(":1")), "a");
        assert_eq!(select(text, None), "a\nb\nc");
    }
}
