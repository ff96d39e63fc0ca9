//! One generated figure: its file stem and its SVG text.

/// A figure of the book, written to `book/src/figures/<name>.svg`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Figure {
    /// The file stem: the chapter's prefix and a slug, e.g. `ch08-delay-distributions`.
    pub name: String,
    /// The whole SVG document.
    pub svg: String,
}

impl Figure {
    pub fn new(name: impl Into<String>, svg: String) -> Self {
        Self {
            name: name.into(),
            svg,
        }
    }

    /// The file name the figure is written to.
    pub fn file_name(&self) -> String {
        format!("{}.svg", self.name)
    }

    /// Why the name is not a valid figure name (`chNN-` and lowercase letters, digits and
    /// dashes), or `None` if it is.
    pub fn name_problem(&self) -> Option<String> {
        let name = &self.name;
        let bytes = name.as_bytes();
        let prefixed = bytes.len() > 5
            && name.starts_with("ch")
            && bytes[2].is_ascii_digit()
            && bytes[3].is_ascii_digit()
            && bytes[4] == b'-';
        if !prefixed {
            return Some(format!(
                "figure name {name:?} must start with its chapter, e.g. \"ch08-\""
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
