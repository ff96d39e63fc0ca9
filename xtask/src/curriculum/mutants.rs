//! Mutants: known-wrong solutions, written as edits to the reference solution
//! (`xtask/mutants/<chapter>/<bug>.toml`). Each must be rejected by the check it names.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// One mutant.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Mutant {
    #[serde(skip)]
    pub name: String,
    /// The bug, in one sentence, shown when the mutant survives.
    pub description: String,
    /// The ids of the checks that must fail on this mutant: one id, or a list of them.
    #[serde(deserialize_with = "one_or_many")]
    pub rejected_by: Vec<String>,
    /// In a learner-tests chapter: the points for a suite that kills this mutant.
    #[serde(default = "one_point")]
    pub points: u32,
    /// In a learner-tests chapter: the book section that helps to write the killing test.
    #[serde(default)]
    pub section: Option<String>,
    #[serde(rename = "edit")]
    pub edits: Vec<Edit>,
}

/// One textual change to a file of the solution.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    #[serde(default = "default_file")]
    pub file: String,
    pub find: String,
    pub replace: String,
}

/// `"a"` or `["a", "b"]`.
fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(id) => vec![id],
        OneOrMany::Many(ids) => ids,
    })
}

fn one_point() -> u32 {
    1
}

fn default_file() -> String {
    "src/lib.rs".to_owned()
}

/// How many mutants a chapter has, without reading them.
pub fn count(dir: &Path) -> usize {
    mutant_files(dir).map_or(0, |files| files.len())
}

/// Every mutant of a chapter, sorted by name.
pub fn load_all(dir: &Path) -> Result<Vec<Mutant>> {
    let mut mutants = mutant_files(dir)?
        .iter()
        .map(|path| load(path))
        .collect::<Result<Vec<_>>>()?;
    mutants.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(mutants)
}

/// The mutant files (`*.toml`) of a chapter's mutants folder; none when there is no folder.
fn mutant_files(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "toml") {
            files.push(path);
        }
    }
    Ok(files)
}

/// One mutant file.
pub fn load(path: &Path) -> Result<Mutant> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut mutant: Mutant =
        toml::from_str(&text).map_err(|error| anyhow::anyhow!("{}: {error}", path.display()))?;
    mutant.name = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .unwrap_or_default()
        .to_owned();
    if mutant.edits.is_empty() {
        bail!("{}: a mutant needs at least one [[edit]]", path.display());
    }
    if mutant.rejected_by.is_empty() {
        bail!("{}: `rejected-by` names no check", path.display());
    }
    Ok(mutant)
}

/// Applies the mutant's edits; each `find` must occur exactly once in its file.
pub fn apply(mutant: &Mutant, files: &mut [(String, String)]) -> Result<()> {
    for (relative, text) in files.iter_mut() {
        let edits: Vec<&Edit> = mutant
            .edits
            .iter()
            .filter(|edit| edit.file == *relative)
            .collect();
        if edits.is_empty() {
            continue;
        }
        let original = text.clone();
        for edit in &edits {
            let found = text.matches(edit.find.as_str()).count();
            if found != 1 {
                bail!(
                    "mutant {}: `find` must occur exactly once in {}, but occurs {found} times:\n{}",
                    mutant.name,
                    edit.file,
                    edit.find
                );
            }
            *text = text.replacen(edit.find.as_str(), &edit.replace, 1);
        }
        if let Some(aligned) = keeping_lines(&original, &edits)
            .filter(|aligned| non_blank_lines(aligned).eq(non_blank_lines(text)))
        {
            *text = aligned;
        }
    }
    if let Some(edit) = mutant
        .edits
        .iter()
        .find(|edit| !files.iter().any(|(relative, _)| *relative == edit.file))
    {
        bail!(
            "mutant {}: the crate has no file {}",
            mutant.name,
            edit.file
        );
    }
    Ok(())
}

/// `original` with `edits` made and every line between and after them where it was: after an
/// edit that is shorter by N lines come N blank lines, after one that is longer the first N
/// blank lines go. Rustc's incremental cache then finds the code around the edits unchanged,
/// spans included, and a mutant recompiles in about half the time (a span that moves is a
/// change to every function below it). Blank lines are added and taken only where a line of
/// `original` begins in code, never inside a string or a comment. `None` when an edit's `find`
/// is not once in `original` or two overlap; [`apply`] keeps the result only if it is the plain
/// one but for blank lines.
fn keeping_lines(original: &str, edits: &[&Edit]) -> Option<String> {
    let mut located: Vec<(usize, &Edit)> = Vec::new();
    for edit in edits {
        let mut found = original.match_indices(edit.find.as_str());
        let (at, _) = found.next()?;
        if found.next().is_some() {
            return None;
        }
        located.push((at, edit));
    }
    located.sort_by_key(|(at, _)| *at);
    let in_code = crate::curriculum::code_lines::starts_in_code(original);
    let mut aligned = String::with_capacity(original.len());
    let mut lines_added: isize = 0;
    let mut cursor = 0;
    let mut line = 0;
    let ends = located
        .iter()
        .map(|(at, edit)| (*at, Some(*edit)))
        .chain([(original.len(), None)]);
    for (at, edit) in ends {
        if at < cursor {
            return None;
        }
        // The unchanged text before this edit, a line at a time.
        for piece in original[cursor..at].split_inclusive('\n') {
            let begins_line = cursor == 0 || original.as_bytes()[cursor - 1] == b'\n';
            if begins_line && in_code[line] {
                if lines_added < 0 {
                    aligned.extend(std::iter::repeat_n('\n', lines_added.unsigned_abs()));
                    lines_added = 0;
                }
                let whole_blank_line = piece.ends_with('\n') && piece.trim().is_empty();
                if lines_added > 0 && whole_blank_line {
                    lines_added -= 1;
                    cursor += piece.len();
                    line += 1;
                    continue;
                }
            }
            aligned.push_str(piece);
            cursor += piece.len();
            line += usize::from(piece.ends_with('\n'));
        }
        let Some(edit) = edit else { break };
        let lines_found = edit.find.matches('\n').count();
        aligned.push_str(&edit.replace);
        lines_added += edit.replace.matches('\n').count() as isize - lines_found as isize;
        cursor = at + edit.find.len();
        line += lines_found;
    }
    Some(aligned)
}

/// The lines of `text` that hold more than whitespace.
fn non_blank_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter(|line| !line.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line of `text` that holds `needle`.
    fn line_of(text: &str, needle: &str) -> usize {
        text.lines().position(|line| line.contains(needle)).unwrap()
    }

    /// `text` as src/lib.rs after a mutant with these edits (find, replace).
    fn mutated(text: &str, edits: &[(&str, &str)]) -> String {
        let mutant = Mutant {
            name: "test".to_owned(),
            description: String::new(),
            rejected_by: Vec::new(),
            points: 1,
            section: None,
            edits: edits
                .iter()
                .map(|(find, replace)| Edit {
                    file: default_file(),
                    find: (*find).to_owned(),
                    replace: (*replace).to_owned(),
                })
                .collect(),
        };
        let mut files = vec![("src/lib.rs".to_owned(), text.to_owned())];
        apply(&mutant, &mut files).unwrap();
        files.remove(0).1
    }

    #[test]
    fn an_edit_leaves_every_line_below_it_where_it_was() {
        let text = "fn a() -> u32 {\n    let x = 1;\n    x + 1\n}\n\nfn b() {}\n\nfn c() {}\n";
        let shorter = mutated(text, &[("    let x = 1;\n    x + 1", "    2")]);
        assert_eq!(line_of(&shorter, "fn b"), line_of(text, "fn b"));
        assert!(shorter.contains("{\n    2\n\n}\n"), "{shorter}");

        let longer = mutated(text, &[("    x + 1", "    let y = x;\n    y + 2")]);
        assert_eq!(line_of(&longer, "fn b"), line_of(text, "fn b"));
        assert_eq!(line_of(&longer, "fn c"), line_of(text, "fn c"));
        assert_eq!(longer.lines().count(), text.lines().count());
    }

    #[test]
    fn a_later_edit_still_finds_the_blank_lines_an_earlier_one_would_take() {
        let text = "fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n\nfn c() {}\n";
        let both = mutated(
            text,
            &[
                ("    one();", "    one();\n    one();"),
                ("}\n\nfn b() {\n    two();", "}\n\nfn b() {\n    three();"),
            ],
        );
        assert!(both.contains("three();"), "{both}");
        assert_eq!(line_of(&both, "fn c"), line_of(text, "fn c"));
    }

    #[test]
    fn blank_lines_inside_strings_and_comments_are_never_taken() {
        let text = "fn a() -> &'static str {\n    \"one\n\ntwo\"\n}\n/*\n\n*/\n\nfn b() {}\n";
        let longer = mutated(text, &[("fn a()", "#[inline]\nfn a()")]);
        assert!(longer.contains("\"one\n\ntwo\""), "{longer}");
        assert!(longer.contains("/*\n\n*/"), "{longer}");
        assert_eq!(line_of(&longer, "fn b"), line_of(text, "fn b"));
        // A shorter edit inside an open string adds its blank line after the string ends.
        let shorter = mutated(text, &[("    \"one\n", "    \"one ")]);
        assert!(shorter.contains("\"one \ntwo\"\n"), "{shorter}");
        assert_eq!(line_of(&shorter, "fn b"), line_of(text, "fn b"));
    }

    #[test]
    fn rejected_by_is_one_check_or_a_list() {
        let dir = std::env::temp_dir().join(format!("mutant-format-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let edit = "\n[[edit]]\nfind = \"a\"\nreplace = \"b\"\n";
        let one = dir.join("one.toml");
        std::fs::write(
            &one,
            format!("description = \"d\"\nrejected-by = \"x.y\"{edit}"),
        )
        .unwrap();
        let many = dir.join("many.toml");
        std::fs::write(
            &many,
            format!("description = \"d\"\nrejected-by = [\"x.y\", \"x.z\"]{edit}"),
        )
        .unwrap();
        assert_eq!(load(&one).unwrap().rejected_by, ["x.y"]);
        assert_eq!(load(&many).unwrap().rejected_by, ["x.y", "x.z"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
