//! Small wrong versions of a line of Rust: a comparison loosened or tightened, an operator
//! flipped, a constant moved by one, a condition fixed to true or false, a statement dropped.
//! `cargo xtask sweep` grades the solution with each of them in turn. The changes are textual
//! and made on rustfmt's layout (spaces around binary operators); one that does not compile
//! costs a build and nothing else.

use crate::curriculum::code_lines::char_literal_length;
use crate::curriculum::shown_answers::is_ident;

/// One changed line of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineChange {
    /// 0-based index of the line in its file.
    pub index: usize,
    /// What was changed, in a few words: `< → <=`, `3 → 4`, `statement dropped`.
    pub what: String,
    /// The line after the change; `None` when the line is dropped.
    pub after: Option<String>,
}

/// How a swap finds what it replaces.
#[derive(Debug, Clone, Copy)]
enum Match {
    /// The text anywhere (operators with rustfmt's spaces, method calls).
    Text,
    /// The text as a whole word.
    Word,
}

/// Swaps applied outside string literals: (what, replacement, how it is found).
const CODE_SWAPS: &[(&str, &str, Match)] = &[
    (" < ", " <= ", Match::Text),
    (" <= ", " < ", Match::Text),
    (" > ", " >= ", Match::Text),
    (" >= ", " > ", Match::Text),
    (" == ", " != ", Match::Text),
    (" != ", " == ", Match::Text),
    (" + ", " - ", Match::Text),
    (" - ", " + ", Match::Text),
    (" * ", " + ", Match::Text),
    (" / ", " * ", Match::Text),
    (" += ", " -= ", Match::Text),
    (" -= ", " += ", Match::Text),
    (" && ", " || ", Match::Text),
    (" || ", " && ", Match::Text),
    (".min(", ".max(", Match::Text),
    (".max(", ".min(", Match::Text),
    ("..=", "..", Match::Text),
    (".rev()", "", Match::Text),
    (".first()", ".last()", Match::Text),
    (".last()", ".first()", Match::Text),
    (".is_some()", ".is_none()", Match::Text),
    (".is_none()", ".is_some()", Match::Text),
    ("true", "false", Match::Word),
    ("false", "true", Match::Word),
    ("break", "continue", Match::Word),
    ("continue", "break", Match::Word),
    ("push_back", "push_front", Match::Word),
    ("push_front", "push_back", Match::Word),
    ("pop_front", "pop_back", Match::Word),
    ("pop_back", "pop_front", Match::Word),
    ("saturating_add", "wrapping_add", Match::Word),
    ("saturating_sub", "wrapping_sub", Match::Word),
    ("saturating_mul", "wrapping_mul", Match::Word),
    ("if !", "if ", Match::Word),
];

/// Swaps applied to SQL, which sits in string literals, so they apply to the whole line. Their
/// words (`AND`, `IS NULL`, `DESC`) do not occur in Rust code.
const SQL_SWAPS: &[(&str, &str, Match)] = &[
    (" AND ", " OR ", Match::Text),
    (" OR ", " AND ", Match::Text),
    ("IS NULL", "IS NOT NULL", Match::Word),
    ("IS NOT NULL", "IS NULL", Match::Word),
    ("ASC", "DESC", Match::Word),
    ("DESC", "ASC", Match::Word),
];

/// Every change of line `index` of a file (given as `line`), in a fixed order.
pub fn changes_of_line(index: usize, line: &str) -> Vec<LineChange> {
    let trimmed = line.trim();
    if trimmed.is_empty() || trimmed.starts_with("//") || trimmed.starts_with("#[") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut push = |what: String, after: Option<String>| {
        if after.as_deref() != Some(line) {
            out.push(LineChange { index, what, after });
        }
    };
    let replace =
        |start: usize, end: usize, new: &str| format!("{}{new}{}", &line[..start], &line[end..]);
    let code = code_spans(line);
    for &(old, new, how) in CODE_SWAPS {
        for start in occurrences(line, &code, old, how) {
            push(
                format!("{} → {}", old.trim(), new.trim()),
                Some(replace(start, start + old.len(), new)),
            );
        }
    }
    for start in open_ranges(line, &code) {
        push(
            ".. → ..=".to_owned(),
            Some(replace(start, start + 2, "..=")),
        );
    }
    for (start, end) in integers(line, &code) {
        let Ok(value) = line[start..end].replace('_', "").parse::<u128>() else {
            continue;
        };
        for other in [value.checked_add(1), value.checked_sub(1)]
            .into_iter()
            .flatten()
        {
            push(
                format!("{value} → {other}"),
                Some(replace(start, end, &other.to_string())),
            );
        }
    }
    if let Some(head) = condition_head(line) {
        for fixed in ["true", "false"] {
            push(
                format!("condition → {fixed}"),
                Some(format!("{head}{fixed} {{")),
            );
        }
    }
    for &(old, new, how) in SQL_SWAPS {
        for start in occurrences(line, &[(0, line.len())], old, how) {
            push(
                format!("{} → {}", old.trim(), new.trim()),
                Some(replace(start, start + old.len(), new)),
            );
        }
    }
    for (first, second) in adjacent_arguments(line, &code) {
        let (a, b) = (&line[first.0..first.1], &line[second.0..second.1]);
        let swapped = format!(
            "{}{b}{}{a}{}",
            &line[..first.0],
            &line[first.1..second.0],
            &line[second.1..]
        );
        push(format!("({a}, {b}) → ({b}, {a})"), Some(swapped));
    }
    for end in compared_operands(line, &code) {
        for step in [" + 1", " - 1"] {
            let after = format!("{}{step}{}", &line[..end], &line[end..]);
            push(format!("operand{step}"), Some(after));
        }
    }
    if is_droppable_statement(trimmed) {
        push("statement dropped".to_owned(), None);
    }
    out
}

/// Where `needle` starts inside `spans` of `line`; as a word, it has no letter, digit or `_`
/// on either side.
fn occurrences(line: &str, spans: &[(usize, usize)], needle: &str, how: Match) -> Vec<usize> {
    let mut found = Vec::new();
    for &(from, to) in spans {
        let segment = &line[from..to];
        for (offset, _) in segment.match_indices(needle) {
            let (start, end) = (from + offset, from + offset + needle.len());
            let whole_word =
                !line[..start].ends_with(is_ident) && !line[end..].starts_with(is_ident);
            if matches!(how, Match::Text) || whole_word {
                found.push(start);
            }
        }
    }
    found
}

/// Two neighbouring arguments of a call or a tuple, each a plain name or field path (`base`,
/// `cfg.cap`): swapped, they still compile when their types agree, as `(base, cap)` does.
fn adjacent_arguments(
    line: &str,
    spans: &[(usize, usize)],
) -> Vec<((usize, usize), (usize, usize))> {
    let mut found = Vec::new();
    for comma in occurrences(line, spans, ", ", Match::Text) {
        let before = &line[..comma];
        let first_start = before.trim_end_matches(is_path_char).len();
        let second_start = comma + 2;
        let second_end = second_start + path_length(&line[second_start..]);
        let opens = before[..first_start].ends_with(['(', ' ']);
        let closes = line[second_end..].starts_with([')', ',']);
        let plain = |text: &str| {
            text.starts_with(|c: char| c.is_alphabetic() || c == '_') && !text.ends_with('.')
        };
        if opens
            && closes
            && plain(&line[first_start..comma])
            && plain(&line[second_start..second_end])
            && line[first_start..comma] != line[second_start..second_end]
        {
            found.push(((first_start, comma), (second_start, second_end)));
        }
    }
    found
}

/// Where the right-hand operand of a comparison ends, when it is a plain name or field path
/// (`limit`, `policy.max_attempts`): `+ 1` or `- 1` there moves the boundary by one either way.
fn compared_operands(line: &str, spans: &[(usize, usize)]) -> Vec<usize> {
    let mut ends = Vec::new();
    for operator in [" < ", " <= ", " > ", " >= ", " == "] {
        for start in occurrences(line, spans, operator, Match::Text) {
            let operand_start = start + operator.len();
            let rest = &line[operand_start..];
            let length = path_length(rest);
            let operand = &rest[..length];
            let after = &rest[length..];
            let ends_expression = after.is_empty()
                || [")", " {", " &&", " ||", ",", ";"]
                    .iter()
                    .any(|end| after.starts_with(end));
            if length > 0
                && operand.starts_with(|c: char| c.is_alphabetic() || c == '_')
                && ends_expression
            {
                ends.push(operand_start + length);
            }
        }
    }
    ends
}

/// A character of a name or a field path (`cfg.cap`).
fn is_path_char(c: char) -> bool {
    is_ident(c) || c == '.'
}

/// The length of the name or field path that `text` starts with.
fn path_length(text: &str) -> usize {
    text.len() - text.trim_start_matches(is_path_char).len()
}

/// Exclusive ranges between two values (`0..n`, `a..f(x)`), which may become inclusive.
fn open_ranges(line: &str, spans: &[(usize, usize)]) -> Vec<usize> {
    occurrences(line, spans, "..", Match::Text)
        .into_iter()
        .filter(|&start| {
            let after = &line[start + 2..];
            line[..start].ends_with(|c: char| is_ident(c) || c == ')')
                && after.starts_with(|c: char| is_ident(c) || c == '(')
        })
        .collect()
}

/// The integer literals inside `spans` (`3`, `1_000`), not parts of names or of float literals.
fn integers(line: &str, spans: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let bytes = line.as_bytes();
    let mut found = Vec::new();
    for &(from, to) in spans {
        let mut i = from;
        while i < to {
            if !bytes[i].is_ascii_digit()
                || (i > 0 && (is_ident(char::from(bytes[i - 1])) || bytes[i - 1] == b'.'))
            {
                i += 1;
                continue;
            }
            let start = i;
            while i < to && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
                i += 1;
            }
            let float_or_suffix =
                i < bytes.len() && (bytes[i] == b'.' || is_ident(char::from(bytes[i])));
            if !float_or_suffix {
                found.push((start, i));
            }
        }
    }
    found
}

/// `    if ` or `    } else if ` when the line is an `if` whose condition ends it with ` {`
/// (not an `if let`).
fn condition_head(line: &str) -> Option<&str> {
    let condition = line.strip_suffix(" {")?;
    let indent = condition.len() - condition.trim_start().len();
    let rest = &condition[indent..];
    let keyword = ["} else if ", "if "]
        .into_iter()
        .find(|keyword| rest.starts_with(keyword))?;
    let tested = &rest[keyword.len()..];
    (!tested.starts_with("let ") && !tested.is_empty()).then(|| &line[..indent + keyword.len()])
}

/// A statement whose line can go without breaking the syntax around it: it ends the line with
/// `;`, binds nothing, and opens no bracket it does not close.
fn is_droppable_statement(trimmed: &str) -> bool {
    let balanced =
        |open: char, close: char| trimmed.matches(open).count() == trimmed.matches(close).count();
    trimmed.ends_with(';')
        && !trimmed.starts_with(['}', ')', ']'])
        && !["let ", "return", "use ", "const ", "static "]
            .iter()
            .any(|start| trimmed.starts_with(start))
        && balanced('(', ')')
        && balanced('{', '}')
        && balanced('[', ']')
}

/// The byte ranges of `line` outside string and character literals and before a `//` comment.
/// A line of a string that spans several lines looks like code here; SQL swaps cover it.
fn code_spans(line: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    let mut in_string = false;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' if in_string => {
                chars.next();
            }
            '"' if in_string => {
                in_string = false;
                start = i + 1;
            }
            '"' => {
                spans.push((start, i));
                in_string = true;
            }
            '\'' if !in_string => {
                // A character literal ('x', '\n') is skipped whole; a lifetime is code.
                if let Some(length) = char_literal_length(&line[i + 1..]) {
                    let end = i + 1 + length;
                    spans.push((start, i));
                    while chars.peek().is_some_and(|&(j, _)| j < end) {
                        chars.next();
                    }
                    start = end;
                }
            }
            '/' if !in_string && line[i..].starts_with("//") => {
                spans.push((start, i));
                return spans;
            }
            _ => {}
        }
    }
    if !in_string {
        spans.push((start, line.len()));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn afters(line: &str) -> Vec<String> {
        changes_of_line(0, line)
            .into_iter()
            .map(|change| change.after.unwrap_or_else(|| "<dropped>".to_owned()))
            .collect()
    }

    #[test]
    fn comparisons_constants_and_conditions_change_one_at_a_time() {
        let changed = afters("    if attempt < max_attempts {");
        assert!(changed.contains(&"    if attempt <= max_attempts {".to_owned()));
        assert!(changed.contains(&"    if true {".to_owned()));
        assert!(changed.contains(&"    if false {".to_owned()));
        let changed = afters("        let delay = base * 2 + 1_000;");
        for expected in [
            "        let delay = base + 2 + 1_000;",
            "        let delay = base * 2 - 1_000;",
            "        let delay = base * 3 + 1_000;",
            "        let delay = base * 1 + 1_000;",
            "        let delay = base * 2 + 1001;",
        ] {
            assert!(
                changed.contains(&expected.to_owned()),
                "{expected} in {changed:?}"
            );
        }
        assert!(
            !changed.contains(&"<dropped>".to_owned()),
            "a binding is never dropped"
        );
    }

    #[test]
    fn strings_and_comments_are_left_alone_but_sql_is_not() {
        assert!(
            afters(r#"    println!("a < b == c {x}"); // 3 < 4"#)
                .iter()
                .all(|after| after.contains("a < b == c") && after.contains("// 3 < 4"))
        );
        let changed = afters("             WHERE status = 'pending' AND next_retry_at IS NULL");
        assert!(changed.contains(
            &"             WHERE status = 'pending' OR next_retry_at IS NULL".to_owned()
        ));
        assert!(changed.contains(
            &"             WHERE status = 'pending' AND next_retry_at IS NOT NULL".to_owned()
        ));
        let changed =
            afters(r#"    conn.execute("DELETE FROM outbox WHERE id = ?1 AND sent", [])?;"#);
        assert!(
            changed
                .iter()
                .any(|after| after.contains("id = ?1 OR sent"))
        );
    }

    #[test]
    fn neighbouring_arguments_swap_and_compared_operands_move_by_one() {
        let changed = afters("    let delay = full_jitter(attempt, cfg.base, cfg.cap, rng);");
        assert!(
            changed.contains(
                &"    let delay = full_jitter(attempt, cfg.cap, cfg.base, rng);".to_owned()
            )
        );
        assert!(
            changed.contains(
                &"    let delay = full_jitter(cfg.base, attempt, cfg.cap, rng);".to_owned()
            )
        );
        let changed = afters("        if attempt >= policy.max_attempts {");
        assert!(changed.contains(&"        if attempt >= policy.max_attempts + 1 {".to_owned()));
        assert!(changed.contains(&"        if attempt >= policy.max_attempts - 1 {".to_owned()));
        assert!(
            afters("    let s = format!(\"{a}, {b}\");")
                .iter()
                .all(|after| after.contains("{a}, {b}")),
            "a comma inside a string is not an argument list"
        );
    }

    #[test]
    fn a_statement_is_dropped_only_when_the_rest_still_parses() {
        assert!(afters("        stats.published += 1;").contains(&"<dropped>".to_owned()));
        for kept in [
            "        let x = 1;",
            "        return Err(e);",
            "        }),",
            "        foo(a,",
        ] {
            assert!(!afters(kept).contains(&"<dropped>".to_owned()), "{kept}");
        }
        assert!(afters("        // x < y;").is_empty());
    }
}
