//! One generated figure: its file stem and its SVG text (or, for a table, its Markdown), and the
//! language its words are in.

/// The language of a figure's words. English figures go to `book/src/figures/`, Japanese ones to
/// `book/src/figures/ja/` (the Japanese book shows those). Numbers, units and identifiers are the
/// same in both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    En,
    Ja,
}

impl Lang {
    /// Every language the figures are drawn in.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Ja];

    /// One label in this language. Every call site names both words side by side, so a figure's
    /// English and Japanese cannot drift apart: `lang.pick("number of clients", "クライアント数")`.
    pub fn pick<T>(self, en: T, ja: T) -> T {
        match self {
            Lang::En => en,
            Lang::Ja => ja,
        }
    }

    /// The folder under the figures directory that holds this language's figures.
    pub fn folder(self) -> Option<&'static str> {
        self.pick(None, Some("ja"))
    }
}

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
    /// The language of its words (set by the generator from the language it drew the chapter in).
    pub lang: Lang,
}

impl Figure {
    pub fn new(name: impl Into<String>, svg: String) -> Self {
        Self {
            name: name.into(),
            svg,
            extension: "svg",
            lang: Lang::En,
        }
    }

    /// A generated Markdown table, written to `<name>.md`.
    pub fn markdown(name: impl Into<String>, text: String) -> Self {
        Self {
            name: name.into(),
            svg: text,
            extension: "md",
            lang: Lang::En,
        }
    }

    /// The figure in `lang`'s folder.
    pub fn in_lang(mut self, lang: Lang) -> Self {
        self.lang = lang;
        self
    }

    /// The file the figure is written to, relative to the figures directory: `<name>.svg`, or
    /// `ja/<name>.svg` for a Japanese figure.
    pub fn file_name(&self) -> String {
        match self.lang.folder() {
            Some(folder) => format!("{folder}/{}.{}", self.name, self.extension),
            None => format!("{}.{}", self.name, self.extension),
        }
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
