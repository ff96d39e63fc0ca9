//! How wide text is drawn: East Asian wide characters (kana, kanji, Hangul, full-width forms)
//! take two terminal columns, or about one em in a figure, where a Latin letter takes one
//! column or about half an em. Standard library only: the figures crate and the integration
//! tests include this file by `#[path]`.

/// Whether `c` is shown two columns wide (Hangul, CJK, kana, full-width forms).
pub fn wide(c: char) -> bool {
    matches!(u32::from(c),
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6)
}

/// How many terminal columns `text` takes: wide characters take two.
pub fn columns(text: &str) -> usize {
    text.chars().map(|c| if wide(c) { 2 } else { 1 }).sum()
}
