//! The one XML escape of the workbook: the JUnit writer (`report::formats`) and the book's SVG
//! figures (`xtask/figures`, which includes this file by path: it is a crate of its own, and one
//! function is not worth a third crate) both write text into XML with it.

/// Escapes text for XML attributes and content, dropping characters XML 1.0 forbids.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_is_escaped_and_characters_xml_forbids_are_dropped() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(escape("it's\tfine\n"), "it&apos;s\tfine\n");
    }
}
