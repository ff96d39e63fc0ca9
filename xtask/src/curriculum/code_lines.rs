//! Which lines of a Rust file begin in code, rather than inside a string literal or a block
//! comment that spans lines: a blank line may be added or removed at such a line without
//! changing what the file means.

/// For each line of `text`, whether it begins in code. A line comment ends with its line, so the
/// next line begins in code; a string, raw string or block comment that is still open at the
/// end of a line leaves the next line inside it.
pub fn starts_in_code(text: &str) -> Vec<bool> {
    // Every delimiter is ASCII, and no byte of a longer UTF-8 character is: bytes will do.
    let bytes = text.as_bytes();
    let hashes_at = |i: usize| bytes[i..].iter().take_while(|&&b| b == b'#').count();
    let mut starts = vec![true];
    let mut state = State::Code;
    let mut i = 0;
    while i < bytes.len() {
        let next = bytes.get(i + 1).copied();
        match (state, bytes[i]) {
            (State::Code, b'/') if next == Some(b'/') => {
                // To the end of the line, which is still counted below.
                i += text[i..].find('\n').unwrap_or(text.len() - i);
                continue;
            }
            (State::Code, b'/') if next == Some(b'*') => {
                state = State::BlockComment(1);
                i += 1;
            }
            (State::Code, b'"') => state = State::Str,
            (State::Code, b'r') if !continues_word(bytes, i) => {
                let hashes = hashes_at(i + 1);
                if bytes.get(i + 1 + hashes) == Some(&b'"') {
                    state = State::RawStr(hashes);
                    i += hashes + 1;
                }
            }
            (State::Code, b'\'') => i += char_literal_length(&text[i + 1..]).unwrap_or(0),
            (State::Str, b'\\') => i += 1,
            (State::Str, b'"') => state = State::Code,
            (State::RawStr(hashes), b'"') if hashes_at(i + 1) >= hashes => {
                state = State::Code;
                i += hashes;
            }
            (State::BlockComment(depth), b'/') if next == Some(b'*') => {
                state = State::BlockComment(depth + 1);
                i += 1;
            }
            (State::BlockComment(depth), b'*') if next == Some(b'/') => {
                state = match depth {
                    1 => State::Code,
                    _ => State::BlockComment(depth - 1),
                };
                i += 1;
            }
            _ => {}
        }
        if bytes.get(i) == Some(&b'\n') {
            starts.push(state == State::Code);
        }
        i += 1;
    }
    starts
}

/// The length in bytes of the rest of a character literal, closing quote included, given the
/// text after its opening quote (`x'`, `"'`, `\''`, `\u{1F600}'`); `None` when the quote opens
/// a lifetime or a label instead.
pub fn char_literal_length(after_quote: &str) -> Option<usize> {
    if let Some(escape) = after_quote.strip_prefix('\\') {
        // The escaped character, then anything up to the closing quote (`\u{…}`).
        let first = escape.chars().next()?;
        let rest = &escape[first.len_utf8()..];
        return rest.find('\'').map(|at| 1 + first.len_utf8() + at + 1);
    }
    let first = after_quote.chars().next()?;
    after_quote[first.len_utf8()..]
        .starts_with('\'')
        .then(|| first.len_utf8() + 1)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Code,
    Str,
    /// A raw string closed by `"` and this many `#`.
    RawStr(usize),
    /// Nested this deep.
    BlockComment(usize),
}

/// Whether the `r` at `i` continues a word (`for`, `ptr`) rather than opening a raw string
/// (`r"…"`, or `br"…"` and `cr"…"`, whose `b` or `c` alone makes no word of it).
fn continues_word(bytes: &[u8], i: usize) -> bool {
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || !b.is_ascii();
    match i.checked_sub(1).map(|j| bytes[j]) {
        None => false,
        Some(b'b' | b'c') => i >= 2 && is_word(bytes[i - 2]),
        Some(before) => is_word(before),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(text: &str) -> Vec<bool> {
        starts_in_code(text)
    }

    #[test]
    fn code_and_line_comments_leave_every_line_in_code() {
        assert_eq!(
            starts("fn a() {\n    // a \"quote\n    let b = 1; // /* not a comment\n}\n"),
            [true, true, true, true, true]
        );
    }

    #[test]
    fn strings_raw_strings_and_block_comments_hold_the_lines_they_span() {
        assert_eq!(
            starts("let a = \"one\n\ntwo\";\nlet b = 2;\n"),
            [true, false, false, true, true]
        );
        assert_eq!(
            starts("let a = r#\"one \"quoted\"\n\n\"#;\nlet b = br\"x\ny\";\n"),
            [true, false, false, true, false, true]
        );
        assert_eq!(
            starts("/* outer /* inner */\nstill */\nfn f() {}\n"),
            [true, false, true, true]
        );
        assert_eq!(starts("let a = \"escaped \\\"\n\";\n"), [true, false, true]);
    }

    #[test]
    fn a_character_literal_is_measured_to_its_closing_quote() {
        assert_eq!(char_literal_length("x' rest"), Some(2));
        assert_eq!(char_literal_length("é'"), Some(3));
        assert_eq!(char_literal_length("\\'' rest"), Some(3));
        assert_eq!(char_literal_length("\\u{1F600}' rest"), Some(10));
        assert_eq!(char_literal_length("a>(x: &'a str)"), None);
        assert_eq!(char_literal_length("outer: loop {"), None);
    }

    #[test]
    fn quotes_in_character_literals_and_lifetimes_open_nothing() {
        assert_eq!(
            starts("let q = '\"';\nlet e = '\\'';\nfn f<'a>(x: &'a str) {}\nlet u = '\\u{22}';\n"),
            [true, true, true, true, true]
        );
        assert_eq!(
            starts("for r in rs {\n}\nlet s = \"x\";\n"),
            [true, true, true, true]
        );
    }
}
