//! One generated figure: its file stem and its SVG text (or, for a table, its Markdown).

/// A figure of the book, written to `book/src/figures/<name>.svg`; or a generated table, written
/// to `book/src/figures/<name>.md` for a page to `{{#include}}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figure {
    /// The file stem: the chapter's prefix and a slug, e.g. `ch08-delay-distributions`.
    pub name: String,
    /// The whole file: an SVG document, or Markdown for a table.
    pub svg: String,
    /// The file extension: `svg`, or `md` for a table.
    pub extension: &'static str,
}

impl Figure {
    pub fn new(name: impl Into<String>, svg: String) -> Self {
        Self {
            name: name.into(),
            svg,
            extension: "svg",
        }
    }

    /// A generated Markdown table, written to `<name>.md`.
    pub fn markdown(name: impl Into<String>, text: String) -> Self {
        Self {
            name: name.into(),
            svg: text,
            extension: "md",
        }
    }

    /// The file name the figure is written to.
    pub fn file_name(&self) -> String {
        format!("{}.{}", self.name, self.extension)
    }

    /// Why the name is not a valid figure name (`chNN-` and lowercase letters, digits and
    /// dashes), or `None` if it is.
    pub fn name_problem(&self) -> Option<String> {
        let name = &self.name;
        let bytes = name.as_bytes();
        // A chapter's figures start with its id; figures of the whole book with `book-`.
        let prefixed = (bytes.len() > 5
            && name.starts_with("ch")
            && bytes[2].is_ascii_digit()
            && bytes[3].is_ascii_digit()
            && bytes[4] == b'-')
            || (name.starts_with("book-") && bytes.len() > 5);
        if !prefixed {
            return Some(format!(
                "figure name {name:?} must start with its chapter, e.g. \"ch08-\", or with \"book-\""
            ));
        }
        if !bytes
            .iter()
            .all(|&b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        {
            return Some(format!(
                "figure name {name:?} may hold only lowercase letters, digits and dashes"
            ));
        }
        None
    }
}
