//! Which lines of a Rust file begin in code, rather than inside a string literal or a block
//! comment that spans lines: a blank line may be added or removed at such a line without
//! changing what the file means.

/// For each line of `text`, whether it begins in code. A line comment ends with its line, so the
/// next line begins in code; a string, raw string or block comment that is still open at the
/// end of a line leaves the next line inside it.
pub fn starts_in_code(text: &str) -> Vec<bool> {
    let chars: Vec<char> = text.chars().collect();
    let mut starts = vec![true];
    let mut state = State::Code;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        match state {
            State::Code => match c {
                '/' if next == Some('/') => {
                    while i < chars.len() && chars[i] != '\n' {
                        i += 1;
                    }
                    continue;
                }
                '/' if next == Some('*') => {
                    state = State::BlockComment(1);
                    i += 1;
                }
                '"' => state = State::Str,
                'r' if !follows_identifier(&chars, i) => {
                    let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
                    if chars.get(i + 1 + hashes) == Some(&'"') {
                        state = State::RawStr(hashes);
                        i += hashes + 1;
                    }
                }
                '\'' => i += char_literal_length(&chars, i),
                _ => {}
            },
            State::Str => match c {
                '\\' => i += 1,
                '"' => state = State::Code,
                _ => {}
            },
            State::RawStr(hashes) => {
                if c == '"' && chars[i + 1..].iter().take_while(|&&h| h == '#').count() >= hashes {
                    state = State::Code;
                    i += hashes;
                }
            }
            State::BlockComment(depth) => {
                if c == '/' && next == Some('*') {
                    state = State::BlockComment(depth + 1);
                    i += 1;
                } else if c == '*' && next == Some('/') {
                    state = if depth == 1 {
                        State::Code
                    } else {
                        State::BlockComment(depth - 1)
                    };
                    i += 1;
                }
            }
        }
        if chars.get(i) == Some(&'\n') {
            starts.push(state == State::Code);
        }
        i += 1;
    }
    starts
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

/// Whether the character at `i` continues a word (`for`, `br`, `cr` end in `r` too; `br"…"` and
/// `cr"…"` are raw strings, which their `b` or `c` alone does not make a word of).
fn follows_identifier(chars: &[char], i: usize) -> bool {
    let Some(&before) = i.checked_sub(1).and_then(|j| chars.get(j)) else {
        return false;
    };
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    if matches!(before, 'b' | 'c') {
        return i >= 2 && is_word(chars[i - 2]);
    }
    is_word(before)
}

/// How many characters after the `'` at `i` belong to a character literal (`'a'`, `'"'`,
/// `'\''`, `'\u{1F600}'`): none for a lifetime or a label.
fn char_literal_length(chars: &[char], i: usize) -> usize {
    match chars.get(i + 1) {
        Some('\\') => chars[i + 2..]
            .iter()
            .skip(1)
            .position(|&c| c == '\'')
            .map_or(0, |at| at + 3),
        Some(_) if chars.get(i + 2) == Some(&'\'') => 2,
        _ => 0,
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
